package encoded

import (
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// encoderClass says what CacheEncode does for an encoder.
type encoderClass struct {
	kind classKind
	// eventType is the watch event type of a watchJSON encoder.
	eventType string
}

type classKind int

const (
	// other: hand the decoded object to the encoder.
	other classKind = iota
	// plainJSON: the versioning codec to effectivepolicy.dev/v1alpha1 over
	// the JSON serializer, neither pretty nor YAML: write the bytes.
	plainJSON
	// prettyJSON: the same with pretty set (what curl gets): the plain
	// bytes re-indented as json.MarshalIndent(obj, "", "  ") writes them.
	prettyJSON
	// watchJSON: the API server's watch event encoder with plainJSON both
	// for the object and for the event: write the event's bytes,
	// {"type":T,"object":...} and a newline, as metav1.WatchEvent encodes.
	watchJSON
	// wrapping: another watch event encoder (e.g. a table watch): hand it
	// the Object itself, so that its embedded encoder may take a fast path.
	wrapping
)

// classes caches classify's answers; there are a handful of identifiers.
var classes sync.Map // runtime.Identifier -> encoderClass

// classify recognizes an encoder by its identifier. Identifiers are JSON
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
		// watch encoders
		EmbeddedEncoder string `json:"embeddedEncoder"`
		EventType       string `json:"eventType"`
	}
	if json.Unmarshal([]byte(id), &outer) != nil {
		return encoderClass{kind: other}
	}
	switch outer.Name {
	case "watch":
		if outer.EventType != "" &&
			classify(runtime.Identifier(outer.EmbeddedEncoder)).kind == plainJSON &&
			classify(runtime.Identifier(outer.Encoder)).kind == plainJSON {
			return encoderClass{kind: watchJSON, eventType: outer.EventType}
		}
		return encoderClass{kind: wrapping}
	case "versioning":
	default:
		return encoderClass{kind: other}
	}
	if outer.EncodeGV != v1alpha1.SchemeGroupVersion.String() {
		return encoderClass{kind: other}
	}
	var inner struct {
		Name   string `json:"name"`
		Pretty string `json:"pretty"`
		YAML   string `json:"yaml"`
	}
	if json.Unmarshal([]byte(outer.Encoder), &inner) != nil {
		return encoderClass{kind: other}
	}
	if inner.Name == "json" && inner.YAML == "false" {
		switch inner.Pretty {
		case "false":
			return encoderClass{kind: plainJSON}
		case "true":
			return encoderClass{kind: prettyJSON}
		}
	}
	return encoderClass{kind: other}
}
