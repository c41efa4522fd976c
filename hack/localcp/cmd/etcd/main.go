// Command etcd is etcd v3.6 built from go.etcd.io/etcd/server/v3, for the local control plane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
