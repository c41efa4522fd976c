package encoded

import (
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// encoderClass says what CacheEncode does for an encoder.
type encoderClass int

const (
	// other: hand the decoded object to the encoder.
	other encoderClass = iota
	// plainJSON: the versioning codec to effectivepolicy.dev/v1alpha1 over
	// the JSON serializer, neither pretty nor YAML: write the bytes.
	plainJSON
	// wrapping: an encoder that encodes the object with an embedded encoder
	// and wraps the result (the API server's watch event encoder): hand it
	// the Object itself.
	wrapping
)

// classes caches classify's answers; there are a handful of identifiers.
var classes sync.Map // runtime.Identifier -> encoderClass

// classify recognises an encoder by its identifier. Identifiers are JSON
// objects with a "name" (versioning codec, json serializer, watch encoder);
// an identifier this code does not understand falls back to the decoded
// object, which is always correct.
func classify(id runtime.Identifier) encoderClass {
	if c, ok := classes.Load(id); ok {
		return c.(encoderClass)
	}
	c := classifyUncached(id)
	classes.Store(id, c)
	return c
}

func classifyUncached(id runtime.Identifier) encoderClass {
	var outer struct {
		Name     string `json:"name"`
		EncodeGV string `json:"encodeGV"`
		Encoder  string `json:"encoder"`
	}
	if json.Unmarshal([]byte(id), &outer) != nil {
		return other
	}
	switch outer.Name {
	case "watch":
		return wrapping
	case "versioning":
	default:
		return other
	}
	if outer.EncodeGV != v1alpha1.SchemeGroupVersion.String() {
		return other
	}
	var inner struct {
		Name   string `json:"name"`
		Pretty string `json:"pretty"`
		YAML   string `json:"yaml"`
	}
	if json.Unmarshal([]byte(outer.Encoder), &inner) != nil {
		return other
	}
	if inner.Name == "json" && inner.Pretty == "false" && inner.YAML == "false" {
		return plainJSON
	}
	return other
}
