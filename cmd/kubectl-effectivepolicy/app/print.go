package app

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/scheme"
)

// printsObjects reports whether -o asks for the API objects.
func (o *Options) printsObjects() bool { return o.Output == "yaml" || o.Output == "json" }

// printObject prints an API object as -o asks (yaml or json), with its
// apiVersion and kind set from the scheme (a typed client's objects come
// without them).
func (o *Options) printObject(obj runtime.Object) error {
	p, err := genericclioptions.NewJSONYamlPrintFlags().ToPrinter(o.Output)
	if err != nil {
		return err
	}
	return printers.NewTypeSetter(scheme.Scheme).ToPrinter(p).PrintObj(obj, o.Out)
}

// printTrees prints trees, in color on a terminal (--color=auto), always
// or never.
func (o *Options) printTrees(roots ...*tree.Node) error {
	color := o.Color == "always" || o.Color == "auto" && printers.AllowsColorOutput(o.Out)
	return tree.Printer{Color: color}.Fprint(o.Out, roots...)
}
