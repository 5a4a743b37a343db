package impression

// The labeler's phrase tables. Phrases are written in lowercase words
// separated by spaces (punctuation and hyphens split words, as in the
// text); a word ending in "*" matches any word starting with it. At each
// position the longest phrase wins, so "pericardial effusion" (not an
// observation) hides "effusion", and "nodular opacity" (a lesion) hides
// "opacity".

// mentionKind says how a mention is turned into a label.
type mentionKind uint8

const (
	// direct: the phrase names the finding ("cardiomegaly"); positive unless
	// negated or uncertain.
	direct mentionKind = iota
	// attribute: the phrase names an organ or measure ("heart size", "the
	// mediastinum"); labelled only when qualified as enlarged (positive),
	// borderline (uncertain) or normal (negative).
	attribute
	// exclusion: the phrase is not an observation ("pericardial effusion");
	// it only hides shorter phrases inside it.
	exclusion
	// otherFinding: an abnormality outside the 14 observations
	// ("granuloma", "scoliosis"); when positive or uncertain it rules out
	// No Finding, as CheXpert's No Finding mentions do.
	otherFinding
)

// phraseRule maps phrases to an observation.
type phraseRule struct {
	obs     Observation
	kind    mentionKind
	phrases []string
}

// mentionRules are the mention phrases (synonyms) of each observation.
var mentionRules = []phraseRule{
	{Cardiomegaly, direct, []string{
		"cardiomegaly", "cardiac enlargement", "enlarged heart", "enlargement of the heart",
		"enlarged cardiac silhouette", "enlarged cardiac shadow", "enlarged cardiac contour*",
		"enlargement of the cardiac silhouette", "cardiac silhouette enlargement",
		"large heart", "heart is enlarged", "heart enlarged", "heart is large",
		"megaly",
	}},
	{Cardiomegaly, attribute, []string{
		"heart", "heart size", "the heart", "cardiac size", "cardiac silhouette*", "cardiac shadow",
		"cardiac contour*", "heart contour*", "cardiac diameter", "cardiothoracic ratio",
		"heart shadow", "cardiac", "cardiopericardial silhouette",
	}},
	{EnlargedCardiomediastinum, direct, []string{
		"widened mediastinum", "mediastinal widening", "widening of the mediastinum",
		"mediastinal enlargement", "enlarged mediastinum", "cardiomediastinal enlargement",
		"enlarged cardiomediastinal silhouette", "mediastinal mass", "mediastinal lipomatosis",
	}},
	{EnlargedCardiomediastinum, attribute, []string{
		"mediastinum", "mediastinal contour*", "mediastinal silhouette", "mediastinal configuration",
		"cardiomediastinal silhouette*", "cardiomediastinal contour*", "cardiomediastinum",
		"cardiomediastinal", "pericardial silhouette", "mediastinal", "superior mediastinum",
		"cardiomediastinal shadow", "mediastinal width",
	}},
	{LungLesion, direct, []string{
		"mass", "masses", "nodule*", "nodular density", "nodular densities", "nodular opacit*",
		"nodular opacification", "lump", "cavitary lesion*", "cavitation", "cavity", "carcinoma",
		"neoplasm", "tumor", "tumour", "lung lesion*", "pulmonary lesion*", "lesion*", "malignancy",
	}},
	{LungOpacity, direct, []string{
		"opacit*", "opacification", "opacified", "density", "densities", "infiltrat*",
		"airspace disease", "air space disease", "airspace process", "air space process",
		"airspace", "air space", "haziness", "hazy", "ground glass", "groundglass",
		"reticular*", "reticulonodular", "interstitial disease", "interstitial process",
		"interstitial lung disease", "interstitial opacit*", "interstitial pattern",
		"increased markings", "interstitial markings", "fibrosis", "fibrotic",
		"scarring", "scar", "scars", "parenchymal disease", "bronchiectasis",
	}},
	{Edema, direct, []string{
		"edema", "oedema", "heart failure", "chf", "vascular congestion", "pulmonary congestion",
		"venous congestion", "vascular engorgement", "cephalization", "kerley",
		"vascular prominence", "prominent vascularity", "prominence of the pulmonary vasculature",
		"prominent pulmonary vasculature", "indistinct vasculature", "indistinctness",
		"congestive", "congestion", "fluid overload", "volume overload",
	}},
	{Consolidation, direct, []string{
		"consolidat*", "airspace consolidation", "lobar consolidation",
	}},
	{Pneumonia, direct, []string{
		"pneumonia", "pneumonias", "bronchopneumonia", "pneumonitis", "infection", "infectious",
		"infectious process", "infiltrative process",
	}},
	{Atelectasis, direct, []string{
		"atelecta*", "collapse", "collapsed", "subsegmental atelectasis", "plate like", "platelike",
		"discoid", "linear atelectasis", "volume loss",
	}},
	{Pneumothorax, direct, []string{
		"pneumothorax", "pneumothoraces", "pneumothoraxes", "hydropneumothorax", "hemopneumothorax",
		"ptx",
	}},
	{PleuralEffusion, direct, []string{
		"effusion", "effusions", "pleural fluid", "fluid in the pleural space", "hydropneumothorax",
		"hemothorax", "hydrothorax", "fluid collection in the pleural",
		"blunting of the costophrenic", "blunted costophrenic", "costophrenic angle blunting",
		"costophrenic blunting", "blunting of the right costophrenic", "blunting of the left costophrenic",
		"blunting of both costophrenic", "blunting of the bilateral costophrenic",
		"fluid in the major fissure", "fluid in the minor fissure", "fissural fluid",
	}},
	{PleuralOther, direct, []string{
		"pleural thickening", "thickening of the pleura", "pleural scar*", "pleural plaque*",
		"pleural calcification*", "calcified pleura*", "fibrothorax", "pleural parenchymal scar*",
		"pleuroparenchymal scar*", "pleural based", "pleural reaction", "apical pleural thickening",
		"biapical pleural thickening", "apical cap*", "pleural fibrosis", "pleural abnormalit*",
		"pleural density",
	}},
	{Fracture, direct, []string{
		"fracture*", "fx", "broken rib*", "rib deformit*", "compression deformit*",
	}},
	{SupportDevices, direct, []string{
		"pacemaker*", "pacer", "picc", "picc line", "central line", "central venous catheter",
		"venous catheter", "catheter*", "port", "porta cath", "port a cath", "portacath", "mediport",
		"tube*", "endotracheal", "ett", "nasogastric", "orogastric", "feeding tube", "chest tube",
		"drain", "drains", "wire*", "sternotomy", "clip*", "stent*", "device*", "hardware",
		"fixation", "prosthe*", "valve replacement", "aicd", "defibrillator", "icd", "lead", "leads",
		"generator", "coil*", "sutur*", "staples", "arthroplasty", "plate", "screws", "rod", "rods",
		"cabg", "loop recorder", "swan ganz", "swan", "pigtail", "gastrostomy", "tracheostomy",
		"anchor*", "valve prosthesis", "mitral valve replacement", "aortic valve replacement",
		"annuloplasty", "vertebroplasty", "kyphoplasty", "spinal fusion", "fusion hardware",
	}},
	// Not observations: these only hide the shorter phrases inside them.
	{NoFinding, exclusion, []string{
		"pericardial effusion*", "joint effusion*", "shoulder effusion*", "knee effusion*",
		"pericardial fluid", "breast mass*", "soft tissue mass*", "soft tissue density", "soft tissue densities",
		"nipple shadow*", "bone density", "bony density", "calcified density", "calcified densities",
		"heart failure symptoms", "mass effect", "body habitus", "port of entry", "leads to", "lead to",
		"tube current", "chest wall", "apical lordotic", "lordotic", "no change", "no interval change",
		"without change", "no significant change", "no significant interval change", "not changed",
		"no significant interval", "cardiac apex", "cardiac border*", "right heart border*",
		"left heart border*", "heart border*", "mediastinal lymph*", "mediastinal adenopathy",
		"mediastinal shift", "shift of the mediastinum", "cardiophrenic", "cardiac valve",
		"cardiac surgery", "density of the", "in density", "bilateral pleural", "pleural space",
		"plate like atelectasis", "platelike atelectasis", "wire sutures", "cardiomediastinal and hilar",
		"hilar contour*", "pulmonary vascularity", "lung volumes", "midline", "mass like",
	}},
	{NoFinding, otherFinding, []string{
		"calcified granuloma*", "calcified nodule*", "calcified lymph node*", "granulomatous",
		"emphysema*", "emphysematous", "blunt*", "elevation", "elevated", "eventration", "scoliosis",
		"scoliotic", "degenera*", "calcifi*", "calcinosis", "hyperinflat*", "hyperexpan*",
		"hyperaerat*", "overinflat*", "hyperlucen*", "flattened", "flattening", "bronchospasm", "asthma",
		"hernia", "copd", "chronic obstructive", "plaque*", "osteophyt*", "spondylosis", "spondylitic",
		"aortic disease", "bronchiolitis", "airways disease", "airway disease", "thickening",
		"cephalization", "aspiration", "bulla*", "bleb*", "contusion", "atherosclero*",
		"atheroscleros*", "osteopenia", "osteoporo*", "demineraliz*", "metasta*", "granuloma*",
		"pneumomediastinum", "pneumoperitoneum", "free air", "osteodystrophy", "cuffing",
		"irregular lucency", "inflam*", "hypertension", "prominen*", "kyphosis", "kyphotic",
		"bullet*", "thoracentesis", "bronchitis", "deformit*", "hemorrhage", "hematoma",
		"radiopaque", "aerophagia", "arthropathy", "arthritis", "arthritic", "tortuous*",
		"tortuosity", "ectatic", "ectasia", "unfolded", "unfolding", "aneurysm*", "dilated",
		"dilatation", "dilation", "low lung volume*", "hypoinflat*", "hypoventilat*",
		"poor inspiration", "shallow inspiration", "low volumes", "decreased lung volumes",
		"markings", "interstitial prominence", "lucency", "lucencies", "cyst", "cysts", "cystic",
		"mastectomy", "lobectomy", "pneumonectomy", "resection", "surgical changes",
		"postsurgical", "post surgical", "postoperative", "post operative", "azygos lobe",
		"pectus", "excavatum", "carinatum", "dislocat*", "fibrocalcific", "sclerosis",
		"sclerotic", "enchondroma", "exostosis", "schmorl*", "wedging", "wedge", "loss of height",
		"height loss", "dish", "hyperostosis", "fused", "adenopathy", "lymphadenopathy",
		"enlarged lymph*", "hilar fullness", "fullness", "tuberculosis", "tb", "histoplasm*",
		"bronchial wall", "peribronchial", "atypical", "abnormal*", "nipple", "limited",
		"technically", "suboptimal", "rotated", "rotation", "underpenetrated", "overpenetrated",
		"hypoexpan*", "scoliosis", "hiatal", "stomach", "shift", "pulmonary artery",
		"pulmonary arteries", "pulmonary hypertension", "epicardial", "fat pad", "lipoma",
		"situs", "dextrocardia", "levoscoliosis", "dextroscoliosis", "thoracolumbar",
		"endplate*", "compression", "wedging", "sclerotic", "lytic", "blastic",
	}},
}

// Negation triggers before a mention: the mention is negative when one of
// these precedes it in the same clause.
var preNegation = []string{
	"no", "not", "without", "negative for", "free of", "clear of", "absence of", "absent",
	"resolution of", "resolved", "rather than", "never", "neither", "nor", "removal of",
	"removed", "no evidence of", "no sign of", "no signs of", "exclude", "excluded",
	"disappearance of", "clearing of", "cleared", "resolving", "interval resolution of",
	"no longer", "none", "nothing", "ruled out", "no radiographic evidence of",
}

// Negation phrases after a mention, within a few words in the same clause.
var postNegation = []string{
	"not", "no longer", "resolved", "has resolved", "have resolved", "absent", "removed",
	"negative", "excluded", "cleared", "gone", "resolving", "not seen", "not identified",
	"not present", "not visualized", "not demonstrated", "not appreciated", "has cleared",
	"have cleared", "has been removed", "have been removed",
}

// Pseudo-triggers: phrases that contain a trigger word but do not negate
// ("no change in the cardiomegaly", "not changed").
var pseudoTriggers = []string{
	"no change", "no interval change", "without change", "no significant change",
	"no significant interval change", "not changed", "not significantly changed",
	"no increase", "no significant increase", "not only", "no definite change",
	"unchanged", "no new", "not new", "without interval change", "no appreciable change",
	"no substantial change", "has not changed", "have not changed", "no further",
	"not been", "not included", "not imaged", "not well", "not optimally",
}

// Phrases that make a mention uncertain even when a negation is present
// (CheXpert's pre-negation uncertainty): "cannot exclude", "not ruled out".
var preNegationUncertainty = []string{
	"cannot exclude", "can not exclude", "cannot be excluded", "can not be excluded",
	"not be excluded", "not excluded", "cannot rule out", "can not rule out", "not ruled out",
	"cannot be ruled out", "can not be ruled out", "not be ruled out", "difficult to exclude",
	"not entirely excluded", "not completely excluded", "not definitely excluded",
	"not entirely ruled out", "difficult to rule out", "cannot be completely excluded",
	"cannot be entirely excluded", "not completely ruled out", "cannot entirely exclude",
	"cannot completely exclude", "not definite", "not definitely", "not clearly",
	"cannot be differentiated", "can not be differentiated", "not be differentiated",
	"difficult to differentiate", "cannot differentiate", "not certain", "uncertain",
	"may not",
}

// Uncertainty triggers before a mention, within a few words in its clause
// ("possible pneumonia", "suspicious for a nodule"); "or" only right next
// to the mention ("atelectasis or scarring").
var preUncertainty = []string{
	"may", "might", "possible", "possibly", "probable", "probably", "likely", "suspect",
	"suspected", "suspicious", "suspicion", "suggest", "suggests", "suggested", "suggesting",
	"suggestive", "concerning", "concern", "question", "questionable", "questioned",
	"equivocal", "borderline", "indeterminate", "could", "consider", "considered",
	"differential", "versus", "vs", "rule out", "r o", "evaluate for", "evaluation for",
	"presumed", "presumably", "presumptive", "favor", "favored", "favoring", "worrisome",
	"perhaps", "potential", "potentially", "would", "should", "maybe", "correlat*",
	"uncertain", "unclear", "or", "and or",
}

// Uncertainty triggers after a mention, within a few words.
var postUncertainty = []string{
	"may", "might", "possible", "possibly", "probable", "probably", "likely", "suspected",
	"questionable", "questioned", "versus", "vs", "or", "not excluded", "is not excluded",
	"are not excluded", "cannot be excluded", "could", "suspicious", "difficult",
	"considered", "concerning", "suggested", "would", "should", "differential", "uncertain",
}

// Words that end a trigger's scope: a negation or uncertainty before them
// does not reach a mention after them.
var scopeTerminators = []string{
	"but", "however", "although", "though", "except", "aside", "apart", "besides",
	"whereas", "while", "yet", "which", "other than", "there is", "there are", "there has",
	"there have", "there may", "there appears", "this", "these", "that", "also", "and there",
	"now", "since", "with", "in addition", "additionally", "otherwise", "new", "again",
	"unchanged", "stable", "persistent", "persistently", "still", "remains", "remain",
	"increased", "increasing", "decreased", "decreasing", "redemonstrat*", "again seen",
	"again noted", "is seen", "are seen", "is noted", "are noted", "is present", "are present",
	"is identified", "are identified", "is again", "are again", "seen", "noted", "present",
	"demonstrated", "identified", "visualized", "appreciated", "evident", "consistent",
	"due", "secondary", "related", "from", "given", "probably", "likely", "possibly",
}

// enlargedQualifiers make an attribute mention positive ("heart size is
// enlarged") ...
var enlargedQualifiers = []string{
	"enlarge*", "large", "larger", "increased", "increase", "increasing", "prominent",
	"prominence", "widen*", "wide", "cardiomegaly", "megaly", "dilated", "dilatation",
	"globular", "expanded", "exaggerated", "magnified", "mildly enlarged", "moderately enlarged",
	"severely enlarged", "massively enlarged", "mild enlargement", "moderate enlargement",
	"marked enlargement", "size increased", "greater than", "boot shaped",
}

// ... borderline ones uncertain ...
var borderlineQualifiers = []string{
	"upper limit*", "upper limits of normal", "upper normal", "top normal", "top of normal",
	"high normal", "borderline", "at the upper", "upper range", "top limits", "top limit*",
	"upper end", "upper bounds", "mildly prominent", "slightly prominent", "slightly enlarged",
	"minimally enlarged", "may be enlarged", "possibly enlarged", "possible enlargement",
	"questionably enlarged", "probably enlarged", "likely enlarged", "borderline enlarged",
	"borderline cardiomegaly", "accentuated", "exaggerated by", "magnified by", "prominent for",
	"prominent due",
}

// ... and normal ones negative.
var normalQualifiers = []string{
	"normal", "normally", "within normal limits", "within normal", "wnl", "unremarkable",
	"not enlarged", "no enlargement", "not large", "stable", "unchanged", "is stable",
	"normal in size", "normal size", "normal sized", "normal-sized", "small", "not widened",
	"no widening", "within the normal", "upper limits of normal", "top normal", "negative",
	"satisfactory", "acceptable", "maintained", "preserved", "appropriate", "no cardiomegaly",
	"not significantly enlarged", "without enlargement", "grossly normal", "grossly unremarkable",
	"normal limits", "limits of normal", "stable in size", "unchanged in size", "unchanged size",
	"midline", "no acute", "clear", "regular", "ok", "good", "not remarkable", "size normal",
	"contours normal", "and contour", "for size and contour", "for size",
}
