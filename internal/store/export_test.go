package store

// SetPairsBatch sets the rows per transaction of indexPairs for a test and
// answers the function that restores it.
func SetPairsBatch(n int) (restore func()) {
	old := pairsBatch
	pairsBatch = n
	return func() { pairsBatch = old }
}
