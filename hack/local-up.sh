#!/usr/bin/env bash
# Starts a real local control plane on loopback, under .local/ in the repository:
# etcd, kube-apiserver (in-process build with a Service resolver hook, see
# hack/localcp/cmd/kube-apiserver), kube-controller-manager (only the namespace, garbage-collector
# and clusterrole-aggregation controllers: the last one makes the aggregated reader ClusterRole
# reach the built-in view/edit/admin roles), the Gateway API v1.6.3 experimental CRDs, the RBAC, Service and APIService
# of effectivepolicy.dev/v1alpha1, and bin/effectivepolicy-apiserver (built by `make build`).
# Returns once `kubectl --kubeconfig .local/kubeconfig get effectivepolicies -A` answers.
#
# Usage:
#   hack/local-up.sh [up]          start whatever is not running yet (idempotent)
#   hack/local-up.sh restart-server  stop and start only bin/effectivepolicy-apiserver (same port)
#   hack/local-up.sh stop-server   stop only bin/effectivepolicy-apiserver
#   hack/local-up.sh start-server  start only bin/effectivepolicy-apiserver (and wait until it answers)
#   hack/local-up.sh start-replica N  start an extra server replica N (own port and cache); the
#                                  kube-apiserver resolver round-robins over the live replicas
#   hack/local-up.sh stop-replica N   stop replica N and take its port out of .local/ep-ports
#   hack/local-up.sh kill-server   SIGKILL bin/effectivepolicy-apiserver (no graceful shutdown; fault tests)
#   hack/local-up.sh kill-replica N   SIGKILL replica N, leaving its port in .local/ep-ports (as a dead
#                                  pod stays in Endpoints until the endpoints controller notices)
#   hack/local-up.sh restart-kube-apiserver  stop (SIGTERM) and start kube-apiserver on the same port
#   hack/local-up.sh env           print `export KUBECONFIG=...` for eval
#
# Environment:
#   EP_LOCAL_DIR       state directory (default: <repo>/.local)
#   EP_SERVER_BIN      our server binary (default: <repo>/bin/effectivepolicy-apiserver)
#   EP_SERVER_FLAGS    extra flags for our server (word-split, after ours, so they win), e.g. "-v=4"
#   EP_SKIP_SERVER=1   bring up the control plane only (no server, no readiness wait on our API)
#   EP_LOCALCP_BIN_DIR prebuilt etcd/kube-apiserver/kube-controller-manager (skips the build)
#   EP_LOCALCP_CACHE   binary cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/effectivepolicy/bin)
#   EP_WAIT_SECONDS    how long to wait for each component (default: 180)
#   EP_CACHE_TMPFS     start-server/restart-server only: run our server in its own mount namespace
#                      (unshare -m) with a tmpfs mounted on its cache directory, with these mount
#                      options (e.g. "size=2m" or "ro,size=2m"); fault tests fill or remount it
#                      with nsenter -t <pid of run/effectivepolicy-apiserver.pid> -m (needs root)
#   GATEWAY_API_VERSION  Gateway API CRD bundle (default: v1.6.3)
set -o errexit -o nounset -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCAL="${EP_LOCAL_DIR:-$ROOT/.local}"
PKI="$LOCAL/pki"
LOGS="$LOCAL/logs"
RUN="$LOCAL/run"
SERVER_BIN="${EP_SERVER_BIN:-$ROOT/bin/effectivepolicy-apiserver}"
WAIT="${EP_WAIT_SECONDS:-180}"
GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.6.3}"
KUBECTL="${KUBECTL:-kubectl}"
NS=effectivepolicy-system
SVC=effectivepolicy-apiserver
cd "$ROOT" # relative paths in EP_SERVER_FLAGS are relative to the repository

log() { echo "local-up: $*" >&2; }

die() {
  local logfile="${2:-}"
  echo "local-up: ERROR: $1" >&2
  if [[ -n "$logfile" && -f "$logfile" ]]; then
    echo "----- last 40 lines of $logfile -----" >&2
    tail -n 40 "$logfile" >&2
    echo "-----" >&2
  fi
  exit 1
}

kc() { "$KUBECTL" --kubeconfig "$LOCAL/kubeconfig" "$@"; }

# --- prerequisites -----------------------------------------------------------------------------

ensure_tools() {
  local missing=()
  command -v openssl >/dev/null || missing+=(openssl)
  command -v flock >/dev/null || missing+=(util-linux)
  command -v sha256sum >/dev/null || missing+=(coreutils)
  command -v curl >/dev/null || missing+=(curl)
  if ((${#missing[@]})); then
    log "installing ${missing[*]} with apt-get"
    local sudo=""
    [[ $(id -u) == 0 ]] || sudo=sudo
    $sudo apt-get update -qq >&2 && $sudo apt-get install -y -qq "${missing[@]}" >&2 ||
      die "could not install ${missing[*]}; install them and retry"
  fi
  command -v "$KUBECTL" >/dev/null || die "kubectl not found (expected /usr/bin/kubectl)"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() {
  local p taken=" ${*:-} "
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 30000))
    [[ "$taken" == *" $p "* ]] && continue
    if port_free "$p"; then echo "$p"; return; fi
  done
  die "no free port found"
}

# Ports are chosen once per .local and kept, so a restarted component comes back where it was.
load_ports() {
  if [[ ! -f "$LOCAL/ports.env" ]]; then
    local e ep k s
    e=$(pick_port); ep=$(pick_port "$e"); k=$(pick_port "$e" "$ep"); s=$(pick_port "$e" "$ep" "$k")
    printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nKUBE_PORT=%s\nSERVER_PORT=%s\n' "$e" "$ep" "$k" "$s" >"$LOCAL/ports.env"
  fi
  # shellcheck disable=SC1091
  source "$LOCAL/ports.env"
  # The kube-apiserver resolver reads this file on every request (comma-separated ports).
  [[ -f "$LOCAL/ep-ports" ]] || echo "$SERVER_PORT" >"$LOCAL/ep-ports"
}

# --- certificates ------------------------------------------------------------------------------

gen_ca() { # name cn
  [[ -f "$PKI/$1.crt" ]] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -keyout "$PKI/$1.key" -out "$PKI/$1.crt" \
    -subj "/CN=$2" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    2>/dev/null || die "openssl: cannot create CA $1"
}

gen_cert() { # name ca subject kind(server|client) [SANs]
  local name=$1 ca=$2 subj=$3 kind=$4 sans=${5:-}
  [[ -f "$PKI/$name.crt" ]] && return
  local ext="$PKI/$name.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [[ $kind == server ]]; then echo "extendedKeyUsage=serverAuth"; else echo "extendedKeyUsage=clientAuth"; fi
    if [[ -n "$sans" ]]; then echo "subjectAltName=$sans"; fi
  } >"$ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "$subj" 2>/dev/null &&
    openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial \
      -days 3650 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null || die "openssl: cannot create certificate $name"
  rm -f "$PKI/$name.csr" "$ext"
}

gen_pki() {
  mkdir -p "$PKI"
  gen_ca ca "effectivepolicy-local-ca"
  gen_ca front-proxy-ca "effectivepolicy-local-front-proxy-ca"
  gen_cert kube-apiserver ca "/CN=kube-apiserver" server \
    "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # The aggregator dials the resolved 127.0.0.1:port with ServerName <service>.<namespace>.svc.
  gen_cert effectivepolicy-apiserver ca "/CN=$SVC.$NS.svc" server \
    "IP:127.0.0.1,DNS:localhost,DNS:$SVC,DNS:$SVC.$NS,DNS:$SVC.$NS.svc,DNS:$SVC.$NS.svc.cluster.local"
  gen_cert front-proxy-client front-proxy-ca "/CN=front-proxy-client" client
  gen_cert admin ca "/O=system:masters/CN=local-admin" client
  # Our server authenticates as its ServiceAccount with a static token (--token-auth-file): the
  # user name is too long for a certificate CN, and a TokenRequest token would expire.
  if [[ ! -f "$PKI/tokens.csv" ]]; then
    local token
    token=$(openssl rand -hex 32)
    echo "$token,system:serviceaccount:$NS:$SVC,local-$SVC,\"system:serviceaccounts,system:serviceaccounts:$NS\"" >"$PKI/tokens.csv"
    echo "$token" >"$PKI/server.token"
  fi
  if [[ ! -f "$PKI/sa.key" ]]; then
    openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null && openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null ||
      die "openssl: cannot create the service-account key pair"
  fi
}

write_kubeconfig() { # file user cert|token:FILE
  local f=$1 user=$2 cred=$3
  [[ -f "$f" ]] && return
  "$KUBECTL" config --kubeconfig "$f" set-cluster local --server "https://127.0.0.1:$KUBE_PORT" \
    --certificate-authority "$PKI/ca.crt" --embed-certs >/dev/null
  if [[ $cred == token:* ]]; then
    "$KUBECTL" config --kubeconfig "$f" set-credentials "$user" --token "$(cat "${cred#token:}")" >/dev/null
  else
    "$KUBECTL" config --kubeconfig "$f" set-credentials "$user" --client-certificate "$PKI/$cred.crt" \
      --client-key "$PKI/$cred.key" --embed-certs >/dev/null
  fi
  "$KUBECTL" config --kubeconfig "$f" set-context local --cluster local --user "$user" >/dev/null
  "$KUBECTL" config --kubeconfig "$f" use-context local >/dev/null
}

# --- processes ---------------------------------------------------------------------------------

alive() { # name
  local pid
  [[ -f "$RUN/$1.pid" ]] || return 1
  pid=$(cat "$RUN/$1.pid")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

start() { # name binary args...
  local name=$1; shift
  if alive "$name"; then log "$name already running (pid $(cat "$RUN/$name.pid"))"; return; fi
  log "starting $name (log: $LOGS/$name.log)"
  echo "=== $(date -u +%FT%TZ) $*" >>"$LOGS/$name.log"
  # setsid: the component outlives the shell, make, or test that started it.
  # 8>&-: the component must not inherit (and hold forever) the lock on .local/.lock.
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null 8>&- &
  echo $! >"$RUN/$name.pid"
}

# kill9 name: SIGKILL, wait until gone, forget the pid.
kill9() {
  local pid
  [[ -f "$RUN/$1.pid" ]] || return 0
  pid=$(cat "$RUN/$1.pid")
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$RUN/$1.pid"
}

stop() { # name
  local pid
  [[ -f "$RUN/$1.pid" ]] || return 0
  pid=$(cat "$RUN/$1.pid")
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$1.pid"
}

wait_for() { # name description command...
  local name=$1 what=$2; shift 2
  local deadline=$((SECONDS + WAIT))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || die "$name exited while waiting for $what" "$LOGS/$name.log"
    ((SECONDS < deadline)) || die "timed out after ${WAIT}s waiting for $what" "$LOGS/$name.log"
    sleep 0.5
  done
}

# --- components --------------------------------------------------------------------------------

start_etcd() {
  start etcd "$CP_BIN/etcd" --name local --data-dir "$LOCAL/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --quota-backend-bytes 2147483648 --log-level warn
  wait_for etcd "etcd on 127.0.0.1:$ETCD_PORT" curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}

start_kube_apiserver() {
  mkdir -p "$LOCAL/kube-apiserver"
  start kube-apiserver "$CP_BIN/kube-apiserver" \
    --ep-service "$NS/$SVC" --ep-ports-file "$LOCAL/ep-ports" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --secure-port="$KUBE_PORT" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --endpoint-reconciler-type none --service-cluster-ip-range 10.0.0.0/24 \
    --cert-dir "$LOCAL/kube-apiserver" \
    --tls-cert-file "$PKI/kube-apiserver.crt" --tls-private-key-file "$PKI/kube-apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --enable-aggregator-routing=false \
    --profiling=false --v=1
  wait_for kube-apiserver "kube-apiserver /readyz on 127.0.0.1:$KUBE_PORT" kc get --raw /readyz
}

start_kube_controller_manager() {
  start kube-controller-manager "$CP_BIN/kube-controller-manager" \
    --kubeconfig "$LOCAL/kube-controller-manager.kubeconfig" \
    --controllers namespace-controller,garbage-collector-controller,clusterrole-aggregation-controller \
    --leader-elect=false --secure-port=0 --use-service-account-credentials=false --v=1
  sleep 1
  alive kube-controller-manager || die "kube-controller-manager exited" "$LOGS/kube-controller-manager.log"
}

install_gateway_api() {
  if kc get crd httproutes.gateway.networking.k8s.io >/dev/null 2>&1 &&
    [[ "$(kc get crd httproutes.gateway.networking.k8s.io -o jsonpath='{.metadata.annotations.gateway\.networking\.k8s\.io/bundle-version}')" == "$GATEWAY_API_VERSION" ]]; then
    return
  fi
  local dir tmpd
  # Outside any module, so that no go.mod or go.sum is touched.
  tmpd=$(mktemp -d)
  dir=$(cd "$tmpd" && GOFLAGS=-mod=mod GO111MODULE=on go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rmdir "$tmpd"
  [[ -d "$dir/config/crd/experimental" ]] || die "cannot download sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION"
  log "installing Gateway API $GATEWAY_API_VERSION experimental CRDs"
  # Every CRD; not kustomization.yaml (not a manifest) and not vap_safeupgrades.yaml, a
  # ValidatingAdmissionPolicy that only guards channel/version upgrades of a real cluster.
  local files=()
  for f in "$dir"/config/crd/experimental/*.yaml; do
    case "$(basename "$f")" in kustomization.yaml | *vap_safeupgrades*) continue ;; esac
    files+=(-f "$f")
  done
  kc apply --server-side --force-conflicts "${files[@]}" >"$LOGS/gateway-api.log" 2>&1 ||
    die "applying the Gateway API CRDs failed" "$LOGS/gateway-api.log"
  KUBECTL="$KUBECTL" "$ROOT/hack/wait-condition.sh" Established --kubeconfig "$LOCAL/kubeconfig" "${files[@]}" \
    >>"$LOGS/gateway-api.log" 2>&1 ||
    die "Gateway API CRDs not established" "$LOGS/gateway-api.log"
}

install_manifests() {
  local ca
  ca=$(base64 -w0 <"$PKI/ca.crt")
  sed "s|@CA_BUNDLE@|$ca|g" "$ROOT/hack/localcp/manifests/effectivepolicy.yaml" >"$LOCAL/effectivepolicy.yaml"
  kc apply -f "$LOCAL/effectivepolicy.yaml" >"$LOGS/manifests.log" 2>&1 ||
    die "applying hack/localcp/manifests/effectivepolicy.yaml failed" "$LOGS/manifests.log"
  # The project's reader ClusterRoles (aggregated into view/edit/admin), so tests exercise the real
  # artifact; a minimal equivalent when it does not exist.
  local roles="$ROOT/artifacts/base/rbac-user-roles.yaml"
  [[ -f "$roles" ]] || roles="$ROOT/hack/localcp/manifests/user-roles-fallback.yaml"
  kc apply -f "$roles" >>"$LOGS/manifests.log" 2>&1 || die "applying $roles failed" "$LOGS/manifests.log"
  wait_for kube-controller-manager "the built-in view role to aggregate effectivepolicies" view_aggregated
}

view_aggregated() { kc get clusterrole view -o jsonpath='{.rules[*].resources}' | grep -q effectivepolicies; }

server_args() { # port cache-dir
  local a=(
    --secure-port="$1" --bind-address=127.0.0.1
    --cert-dir="$LOCAL/server-certs"
    --tls-cert-file="$PKI/effectivepolicy-apiserver.crt" --tls-private-key-file="$PKI/effectivepolicy-apiserver.key"
    --cache-dir="$2"
    --kubeconfig="$LOCAL/server.kubeconfig"
    --authentication-kubeconfig="$LOCAL/server.kubeconfig"
    --authorization-kubeconfig="$LOCAL/server.kubeconfig"
  )
  # shellcheck disable=SC2206
  [[ -n "${EP_SERVER_FLAGS:-}" ]] && a+=(${EP_SERVER_FLAGS})
  printf '%s\n' "${a[@]}"
}

start_server() {
  [[ -x "$SERVER_BIN" ]] || die "$SERVER_BIN not found: run 'make build' first (or set EP_SKIP_SERVER=1)"
  mkdir -p "$LOCAL/server-certs"
  local args=()
  mapfile -t args < <(server_args "$SERVER_PORT" "$LOCAL/cache")
  if [[ -n "${EP_CACHE_TMPFS:-}" ]]; then
    # A private mount namespace, so the tmpfs hides .local/cache from this server only; the shell
    # execs the server, so the pid recorded is the server's.
    mkdir -p "$LOCAL/cache"
    # shellcheck disable=SC2016
    start effectivepolicy-apiserver unshare -m --propagation private sh -c \
      'mount -t tmpfs -o "$1" effectivepolicy-cache "$2" && shift 2 && exec "$@"' \
      sh "$EP_CACHE_TMPFS" "$LOCAL/cache" "$SERVER_BIN" "${args[@]}"
  else
    start effectivepolicy-apiserver "$SERVER_BIN" "${args[@]}"
  fi
  wait_for effectivepolicy-apiserver "effectivepolicy-apiserver on 127.0.0.1:$SERVER_PORT" port_in_use "$SERVER_PORT"
  wait_for effectivepolicy-apiserver "'kubectl get effectivepolicies -A' to answer through the aggregator" \
    kc get effectivepolicies -A --request-timeout=5s
}

# Extra replicas for availability tests: replica N gets its own port (kept in replica-N.port) and
# cache directory, and its port is added to .local/ep-ports, which the kube-apiserver resolver
# round-robins over (skipping ports that do not accept connections).
start_replica() { # n
  local n=$1 name="effectivepolicy-apiserver-$1" port
  [[ "$n" =~ ^[0-9]+$ ]] || die "replica number expected, got '$n'"
  [[ -x "$SERVER_BIN" ]] || die "$SERVER_BIN not found: run 'make build' first"
  [[ -f "$LOCAL/replica-$n.port" ]] || pick_port "$ETCD_PORT" "$ETCD_PEER_PORT" "$KUBE_PORT" "$SERVER_PORT" >"$LOCAL/replica-$n.port"
  port=$(cat "$LOCAL/replica-$n.port")
  local args=()
  mapfile -t args < <(server_args "$port" "$LOCAL/cache-$n")
  start "$name" "$SERVER_BIN" "${args[@]}"
  wait_for "$name" "$name on 127.0.0.1:$port" port_in_use "$port"
  wait_for "$name" "$name /readyz" curl -skf "https://127.0.0.1:$port/readyz"
  grep -qw "$port" "$LOCAL/ep-ports" || echo "$(cat "$LOCAL/ep-ports"),$port" >"$LOCAL/ep-ports"
  log "$name serving on 127.0.0.1:$port; resolver ports: $(cat "$LOCAL/ep-ports")"
}

stop_replica() { # n
  local n=$1 port
  stop "effectivepolicy-apiserver-$n"
  if [[ -f "$LOCAL/replica-$n.port" ]]; then
    port=$(cat "$LOCAL/replica-$n.port")
    tr ',' '\n' <"$LOCAL/ep-ports" | grep -vx "$port" | paste -sd, >"$LOCAL/ep-ports.new"
    mv "$LOCAL/ep-ports.new" "$LOCAL/ep-ports"
  fi
}

port_in_use() { ! port_free "$1"; }

# --- main --------------------------------------------------------------------------------------

init() {
  ensure_tools
  mkdir -p "$LOCAL" "$LOGS" "$RUN"
  load_ports
}

up() {
  local t0=$SECONDS
  init
  exec 8>"$LOCAL/.lock"
  flock 8
  CP_BIN=$("$ROOT/hack/localcp/build.sh") || die "building the control-plane binaries failed"
  gen_pki
  write_kubeconfig "$LOCAL/kubeconfig" local-admin admin
  write_kubeconfig "$LOCAL/kube-controller-manager.kubeconfig" local-admin admin
  write_kubeconfig "$LOCAL/server.kubeconfig" "$SVC" "token:$PKI/server.token"
  start_etcd
  start_kube_apiserver
  start_kube_controller_manager
  install_gateway_api
  install_manifests
  if [[ "${EP_SKIP_SERVER:-}" == 1 ]]; then
    log "EP_SKIP_SERVER=1: not starting our server"
  else
    start_server
  fi
  log "control plane up in $((SECONDS - t0))s; export KUBECONFIG=$LOCAL/kubeconfig"
}

case "${1:-up}" in
up) up ;;
restart-server)
  init
  stop effectivepolicy-apiserver
  start_server
  log "effectivepolicy-apiserver restarted"
  ;;
stop-server) init; stop effectivepolicy-apiserver ;;
kill-server) init; kill9 effectivepolicy-apiserver ;;
kill-replica)
  init
  [[ "${2:?replica number}" =~ ^[0-9]+$ ]] || die "replica number expected, got '$2'"
  kill9 "effectivepolicy-apiserver-$2"
  ;;
restart-kube-apiserver)
  init
  CP_BIN=$("$ROOT/hack/localcp/build.sh") || die "building the control-plane binaries failed"
  stop kube-apiserver
  start_kube_apiserver
  log "kube-apiserver restarted"
  ;;
start-server) init; start_server ;;
start-replica) init; start_replica "${2:?replica number}" ;;
stop-replica) init; stop_replica "${2:?replica number}" ;;
env) echo "export KUBECONFIG=$LOCAL/kubeconfig" ;;
*) die "unknown command '$1' (up | restart-server | stop-server | start-server | kill-server | start-replica N | stop-replica N | kill-replica N | restart-kube-apiserver | env)" ;;
esac
