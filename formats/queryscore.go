package formats

// QueryScore is one row of query-scores-*.parquet: one query's scores
// under one method, the values a report row (ReportRow) of the same
// method, input and split averages over its queries. Two runs' files
// pair the queries both evaluated, by Method, Input, Split and ImageID,
// for a paired comparison of the runs (evaluate.CompareRuns).
type QueryScore struct {
	Method string `parquet:"method"`
	// Input is "bow" or "global", as ReportRow.Input.
	Input string `parquet:"input"`
	// Split is "held-out" or "training", as ReportRow.Split.
	Split   string `parquet:"split"`
	ImageID string `parquet:"image_id"`
	Label   string `parquet:"label"`
	// AP is the query's average precision over the whole collection, P10
	// its precision at 10 and NDCG10 its NDCG at 10 (ReportRow's map,
	// precision_at_10 and ndcg_at_10 are their means).
	AP     float64 `parquet:"ap"`
	P10    float64 `parquet:"precision_at_10"`
	NDCG10 float64 `parquet:"ndcg_at_10"`
}

// Key orders a method's rows together, by query set and then image id.
func (r QueryScore) Key() string {
	return r.Method + "/" + r.Input + "/" + r.Split + "/" + r.ImageID
}

var _ Keyed = QueryScore{}
