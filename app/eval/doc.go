// Package eval holds Clinsight's evaluation metrics and the conventions of
// the public benchmarks it is scored on (EHRSQL answers, ranking metrics,
// ROUGE). It depends only on the standard library and the data layer.
package eval
