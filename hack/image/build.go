package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user the server runs as, and where its files go in the image.
const (
	uid        = 65532
	entrypoint = "/effectivepolicy-apiserver"
	cacheDir   = "/var/cache/effectivepolicy"
)

// buildOptions are build's flags.
type buildOptions struct {
	binary, out, arch, version string
	tags                       []string
	created                    time.Time
}

func parseBuildFlags(args []string) (buildOptions, error) {
	var o buildOptions
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "", "the static linux binary of effectivepolicy-apiserver")
	fs.StringVar(&o.out, "o", "", "the docker-archive tarball to write")
	fs.Func("tag", "an image reference recorded in the tarball (repeatable; default effectivepolicy-apiserver:dev)", func(v string) error {
		o.tags = append(o.tags, v)
		return nil
	})
	fs.StringVar(&o.arch, "arch", "amd64", "the binary's GOARCH")
	fs.StringVar(&o.version, "version", "", "org.opencontainers.image.version label")
	created := fs.String("created", "1970-01-01T00:00:00Z", "image creation time (RFC 3339), fixed for reproducible digests")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.binary == "" || o.out == "" {
		return o, errors.New("build needs -binary and -o")
	}
	if len(o.tags) == 0 {
		o.tags = []string{"effectivepolicy-apiserver:dev"}
	}
	var err error
	if o.created, err = time.Parse(time.RFC3339, *created); err != nil {
		return o, fmt.Errorf("-created: %w", err)
	}
	return o, nil
}

func build(args []string) error {
	o, err := parseBuildFlags(args)
	if err != nil {
		return err
	}
	img, err := assemble(o)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range o.tags {
		ref, err := name.ParseReference(t)
		if err != nil {
			return fmt.Errorf("-tag: %w", err)
		}
		refs[ref] = img
	}
	if err := tarball.MultiRefWriteToFile(o.out, refs); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image: %s %v in %s\n", d, o.tags, o.out)
	return nil
}

// assemble is the image: one layer (rootfs) on nothing, OCI media types, and the configuration
// the Dockerfile's image has.
func assemble(o buildOptions) (v1.Image, error) {
	binary, err := os.ReadFile(o.binary)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(binary, o.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.arch
	cf.Created = v1.Time{Time: o.created}
	cf.Config = v1.Config{
		Entrypoint: []string{entrypoint},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: "/",
		Env:        []string{"PATH=/"},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "effectivepolicy-apiserver",
			"org.opencontainers.image.source":   "https://github.com/effectivepolicy-dev/effectivepolicy",
			"org.opencontainers.image.version":  o.version,
			"org.opencontainers.image.licenses": "Apache-2.0",
		},
	}
	return mutate.ConfigFile(img, cf)
}

// rootfs is the image's one layer.
func rootfs(binary []byte, at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(p string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, Uid: owner, Gid: owner, ModTime: at, Format: tar.FormatPAX})
	}
	file := func(p string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), ModTime: at, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, uid)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir("home/nonroot", 0o700, uid) },
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return dir("var", 0o755, 0) },
		func() error { return dir("var/cache", 0o755, 0) },
		func() error { return dir(path.Clean(cacheDir[1:]), 0o700, uid) },
		func() error { return file(entrypoint[1:], 0o755, binary) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
