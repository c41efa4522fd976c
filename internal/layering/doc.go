// Package layering holds no code: its test checks that no package of the
// module imports one of a higher layer (docs/storage.md, "Layering").
package layering
