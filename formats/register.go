package formats

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// RowTypes lists the reflect.Type of every row type in this package.
var RowTypes = []reflect.Type{
	reflect.TypeFor[Image](),
	reflect.TypeFor[DeadLetter](),
	reflect.TypeFor[Features](),
	reflect.TypeFor[Word](),
	reflect.TypeFor[WordStat](),
	reflect.TypeFor[BoW](),
	reflect.TypeFor[Triplet](),
	reflect.TypeFor[ModelWeight](),
	reflect.TypeFor[ModelTensor](),
	reflect.TypeFor[Posting](),
	reflect.TypeFor[ReportRow](),
}

// The row types are Beam element types: registering them lets Beam name them
// when it serialises a pipeline (a beam.EncodedType of an unregistered struct
// decodes on the worker as an anonymous struct, not as the named type) and
// gives them the schema row coder.
func init() {
	for _, t := range RowTypes {
		beam.RegisterType(t)
	}
}
