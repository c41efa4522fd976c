package differential

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// OracleCommand returns the Command of the oracle whose program is the Go
// module test/differential/oracles/<name> (its main reads the case on
// stdin): the module's command is built once per process from the Go build
// cache into the oracle cache folder ($<env>_CACHE, else the user's cache
// folder's effectivepolicy/oracles), written under a name of its own and
// renamed into place, so that processes building at once never run half a
// file. $<env> names a built command instead. The implementation's own
// binary, which the command runs, is built and cached by the module itself.
func OracleCommand(env, name string) func() ([]string, error) {
	var (
		once sync.Once
		bin  string
		err  error
	)
	return func() ([]string, error) {
		once.Do(func() {
			if p := os.Getenv(env); p != "" {
				bin = p
				return
			}
			bin, err = buildOracleCommand(env, name)
		})
		if err != nil {
			return nil, err
		}
		return []string{bin}, nil
	}
}

func buildOracleCommand(env, name string) (string, error) {
	dir := os.Getenv(env + "_CACHE")
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("the %s oracle's cache folder: %w (set $%s_CACHE)", name, err, env)
		}
		dir = filepath.Join(c, "effectivepolicy", "oracles")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name+"-oracle-command")
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, ".")
	cmd.Dir = filepath.Join(RepoRoot(), "test", "differential", "oracles", name)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the %s oracle: %w\n%s", name, err, out)
	}
	return bin, os.Rename(tmp, bin)
}
