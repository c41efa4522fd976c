package inputs

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// keptMetadata lists the metadata fields the engine reads. Everything else
// (managedFields, annotations such as kubectl's last-applied-configuration,
// ownerReferences, finalizers, generation, ...) is dropped before an object
// enters an informer cache.
var keptMetadata = []string{"name", "namespace", "labels", "creationTimestamp", "uid", "resourceVersion"}

// schemaNoise lists the JSON schema keywords the engine never reads; they are
// removed from CRD schemas (descriptions make up most of a CRD's bytes).
var schemaNoise = []string{"description", "example", "externalDocs", "x-kubernetes-validations"}

// TransformFor returns the cache.TransformFunc for objects of gvk. It is
// idempotent and never mutates its input. Tombstones pass through
// unchanged (client-go does not hand them to transforms, but be safe).
func TransformFor(gvk schema.GroupVersionKind) cache.TransformFunc {
	isCRD := gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
	return func(in interface{}) (interface{}, error) {
		u, ok := in.(*unstructured.Unstructured)
		if !ok {
			return in, nil
		}
		if isCRD {
			return TrimCRD(u), nil
		}
		return Trim(u, gvk), nil
	}
}

// PolicyTransformFor is TransformFor for a policy kind: it also keeps the policy's annotations
// (all but kubectl's last-applied-configuration, a copy of the whole object), since a profile may
// read some (a descriptor's `annotations`, such as kgateway's policy weight); the engine keeps
// only those its descriptor lists. Policies are few beside the topology objects, so this costs
// little memory.
func PolicyTransformFor(gvk schema.GroupVersionKind) cache.TransformFunc {
	return func(in interface{}) (interface{}, error) {
		u, ok := in.(*unstructured.Unstructured)
		if !ok {
			return in, nil
		}
		out := Trim(u, gvk)
		if ann := u.GetAnnotations(); len(ann) > 0 {
			kept := map[string]interface{}{}
			for k, v := range ann {
				if k != lastApplied {
					kept[k] = v
				}
			}
			if len(kept) > 0 {
				out.Object["metadata"].(map[string]interface{})["annotations"] = kept
			}
		}
		return out, nil
	}
}

// keptAnnotations lists, per topology kind, the annotations the engine reads: an
// HTTPRoute's kgateway delegation annotations (pkg/compute/topology.RouteAnnotations).
var keptAnnotations = map[schema.GroupKind][]string{
	{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}: {
		"delegation.kgateway.dev/inherit-parent-matcher", "kgateway.dev/inherited-policy-priority",
	},
}

// keepAnnotations copies the annotations of u named in keys to out's metadata.
func keepAnnotations(u, out *unstructured.Unstructured, keys []string) {
	if len(keys) == 0 {
		return
	}
	ann := u.GetAnnotations()
	kept := map[string]interface{}{}
	for _, k := range keys {
		if v, ok := ann[k]; ok {
			kept[k] = v
		}
	}
	if len(kept) > 0 {
		out.Object["metadata"].(map[string]interface{})["annotations"] = kept
	}
}

// lastApplied is the annotation kubectl apply keeps a copy of the whole object in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// keptSpec lists, for the core kinds whose spec the engine reads in part,
// the spec fields it reads: a Service's ports (their names are the
// sectionNames of policies and backendRefs); a Namespace's spec (finalizers)
// is not read at all. A real Service spec also carries clusterIPs, ipFamilies,
// selector, sessionAffinity, ...: dropping them keeps the informer cache and
// the engine's copy small, and makes an update of only those fields a no-op
// for the engine. Every other kind keeps its whole spec.
var keptSpec = map[schema.GroupKind][]string{
	{Kind: "Service"}:   {"ports"},
	{Kind: "Namespace"}: {},
}

// Trim returns a copy of u reduced to apiVersion, kind, the kept metadata and
// spec (for Services and Namespaces, the part of it in keptSpec). When u
// carries no apiVersion/kind (lists of built-in types may omit them), gvk
// supplies them.
func Trim(u *unstructured.Unstructured, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	out := newTrimmed(u, gvk)
	keepAnnotations(u, out, keptAnnotations[gvk.GroupKind()])
	spec, ok := u.Object["spec"]
	if !ok {
		return out
	}
	fields, partial := keptSpec[gvk.GroupKind()]
	if !partial {
		out.Object["spec"] = spec
		return out
	}
	if len(fields) == 0 {
		return out
	}
	in, _ := spec.(map[string]interface{})
	kept := map[string]interface{}{}
	for _, f := range fields {
		if v, ok := in[f]; ok {
			kept[f] = v
		}
	}
	out.Object["spec"] = kept
	return out
}

// TrimCRD returns a copy of a CustomResourceDefinition reduced to what the
// engine reads: labels, spec.group, spec.names, spec.scope and, per version,
// name, served, storage and the schema without descriptions, examples and
// validation rules. Conversion webhooks (with their CA bundles),
// subresources, printer columns and status are dropped.
func TrimCRD(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := newTrimmed(u, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	spec, ok := u.Object["spec"].(map[string]interface{})
	if !ok {
		return out
	}
	newSpec := map[string]interface{}{}
	for _, f := range []string{"group", "names", "scope"} {
		if v, ok := spec[f]; ok {
			newSpec[f] = v
		}
	}
	if versions, ok := spec["versions"].([]interface{}); ok {
		newVersions := make([]interface{}, 0, len(versions))
		for _, v := range versions {
			vm, ok := v.(map[string]interface{})
			if !ok {
				continue
			}
			nv := map[string]interface{}{}
			for _, f := range []string{"name", "served", "storage"} {
				if x, ok := vm[f]; ok {
					nv[f] = x
				}
			}
			if sch, ok := vm["schema"].(map[string]interface{}); ok {
				if oa, ok := sch["openAPIV3Schema"]; ok {
					nv["schema"] = map[string]interface{}{"openAPIV3Schema": pruneSchema(oa)}
				}
			}
			newVersions = append(newVersions, nv)
		}
		newSpec["versions"] = newVersions
	}
	out.Object["spec"] = newSpec
	return out
}

func newTrimmed(u *unstructured.Unstructured, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]interface{}{}}
	apiVersion, kind := u.GetAPIVersion(), u.GetKind()
	if apiVersion == "" {
		apiVersion = gvk.GroupVersion().String()
	}
	if kind == "" {
		kind = gvk.Kind
	}
	out.Object["apiVersion"] = apiVersion
	out.Object["kind"] = kind
	md := map[string]interface{}{}
	if in, ok := u.Object["metadata"].(map[string]interface{}); ok {
		for _, f := range keptMetadata {
			if v, ok := in[f]; ok && v != nil {
				md[f] = v
			}
		}
	}
	out.Object["metadata"] = md
	return out
}

// pruneSchema copies a JSONSchemaProps value without the noise keywords. It
// knows the structure of a schema so that a property *named* "description"
// survives.
func pruneSchema(v interface{}) interface{} {
	m, ok := v.(map[string]interface{})
	if !ok {
		return v
	}
	out := make(map[string]interface{}, len(m))
	for k, x := range m {
		out[k] = x
	}
	for _, k := range schemaNoise {
		delete(out, k)
	}
	for _, k := range []string{"properties", "patternProperties", "definitions"} {
		if props, ok := m[k].(map[string]interface{}); ok {
			np := make(map[string]interface{}, len(props))
			for name, s := range props {
				np[name] = pruneSchema(s)
			}
			out[k] = np
		}
	}
	for _, k := range []string{"items", "additionalProperties", "additionalItems", "not"} {
		switch x := m[k].(type) {
		case map[string]interface{}:
			out[k] = pruneSchema(x)
		case []interface{}:
			out[k] = pruneList(x)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := m[k].([]interface{}); ok {
			out[k] = pruneList(l)
		}
	}
	return out
}

func pruneList(l []interface{}) []interface{} {
	out := make([]interface{}, len(l))
	for i, s := range l {
		out[i] = pruneSchema(s)
	}
	return out
}
