package trials

import "github.com/clinsight/clinsight/internal/textsearch"

// fillerWords are words that, alone, name no clinical concept: they only
// qualify the words next to them ("type" of "type 2 diabetes", "related"
// of "alcohol related", "age" of "no age restriction"). The extractor
// keeps them inside phrases but never emits them as concepts of their own,
// negated or not.
var fillerWords = textsearch.NewWordSet(`type types kind kinds related relation associated association status
side sided new like use used using uses usage any some other others every each similar
without with form forms part parts`)

// weakWords name a clinical quantity or event only with the word before
// them ("weight loss", "heart rate", "liver tests", "age 65"): a negated
// one alone ("no symptoms", "no age") says nothing and is never emitted;
// one that is not negated stays a search term (dropping these lowers
// NDCG@10 on the SIGIR-BIRCO pool from 0.3072 to 0.2996; "age" alone
// accounts for 0.3072 → 0.3070). "small", "large", "cell" and "non" (the
// prefix of "non-small cell", "non-smoker") came from a denied "non-small
// cell lung cancer", shown as "no non; no small; no cell"; adding them here
// leaves the SIGIR-BIRCO figure at 0.3072 (as fillers, dropping "non" also
// when not negated, it fell to 0.3058).
var weakWords = textsearch.NewWordSet(`age aged problem problems issue issues symptom symptoms sign signs change changes
loss gain rate level levels result results test tests area areas episode episodes grade increase decrease
small large cell cells non`)
