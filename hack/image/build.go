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

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	bin := fs.String("binary", "", "the static linux binary of effectivepolicy-apiserver")
	out := fs.String("o", "", "the docker-archive tarball to write")
	var tags []string
	fs.Func("tag", "an image reference recorded in the tarball (repeatable; default effectivepolicy-apiserver:dev)", func(v string) error {
		tags = append(tags, v)
		return nil
	})
	arch := fs.String("arch", "amd64", "the binary's GOARCH")
	version := fs.String("version", "", "org.opencontainers.image.version label")
	created := fs.String("created", "1970-01-01T00:00:00Z", "image creation time (RFC 3339), fixed for reproducible digests")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" || *out == "" {
		return errors.New("build needs -binary and -o")
	}
	at, err := time.Parse(time.RFC3339, *created)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	if len(tags) == 0 {
		tags = []string{"effectivepolicy-apiserver:dev"}
	}
	binary, err := os.ReadFile(*bin)
	if err != nil {
		return err
	}
	layerTar, err := rootfs(binary, at)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", *arch
	cf.Created = v1.Time{Time: at}
	cf.Config = v1.Config{
		Entrypoint: []string{entrypoint},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: "/",
		Env:        []string{"PATH=/"},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "effectivepolicy-apiserver",
			"org.opencontainers.image.source":   "https://github.com/effectivepolicy-dev/effectivepolicy",
			"org.opencontainers.image.version":  *version,
			"org.opencontainers.image.licenses": "Apache-2.0",
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range tags {
		ref, err := name.ParseReference(t)
		if err != nil {
			return fmt.Errorf("-tag: %w", err)
		}
		refs[ref] = img
	}
	if err := tarball.MultiRefWriteToFile(*out, refs); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image: %s %v in %s\n", d, tags, *out)
	return nil
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
