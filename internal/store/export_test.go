package store

// SetPairsBatch sets the rows per transaction of indexPairs for a test and
// answers the function that restores it.
func SetPairsBatch(n int) (restore func()) {
	old := pairsBatch
	pairsBatch = n
	return func() { pairsBatch = old }
}

// SetSearchWalkRows sets the rows a PostgreSQL search walks before it asks
// the GIN index, for a test, and answers the function that restores it.
func SetSearchWalkRows(n int) (restore func()) {
	old := searchWalkRows
	searchWalkRows = n
	return func() { searchWalkRows = old }
}
