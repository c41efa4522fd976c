/*
Package apiserver assembles the effectivepolicy.dev aggregated API server.

Serving decisions (where the specification is silent):

  - Six resources. The four computed ones (effectivepolicies,
    clustereffectivepolicies, policyreaches, clusterpolicyreaches) take get,
    list and watch: their REST storage implements none of the write
    interfaces, so the API machinery registers no write routes and answers
    POST/PUT/PATCH/DELETE (and deletecollection) with a 405 MethodNotAllowed
    Status. requesttraces and effectivepolicyreviews are create only (the
    SubjectAccessReview pattern: cluster-scoped, the answer in the returned
    object's status, nothing stored); every other verb on them is a 405.
  - Field selectors: metadata.name and metadata.namespace (the scheme's
    default field label conversion); anything else is a 400 BadRequest.
  - list: served at the current resourceVersion. A resourceVersion newer than
    the current one answers 504 with cause ResourceVersionTooLarge, as the
    watch cache does; resourceVersionMatch=Exact with an older one answers 410.
    get always serves the latest state.
  - list paging: with a limit, a list answers the first page and, when more
    remain, a continue token (and remainingItemCount when there is no
    selector). The pages that follow are cut from a snapshot of the first
    page, so a paged list is consistent at the first page's resourceVersion,
    as an etcd-backed list is. A token is valid for snapshotTTL (5 minutes)
    after its last page, in the namespace it was issued for, on the replica
    that issued it; otherwise it answers 410 Gone (expired) and clients list
    again, as after an etcd compaction (client-go's pager does so by itself).
    See pkg/registry/paging.go.
  - watch: resourceVersion "" and "0" start with synthetic ADDED events of
    the current state; a specific resourceVersion resumes strictly after it, or
    answers 410 Gone when it is older than the retained history
    (--watch-history-size events) or newer than the current one.
    sendInitialEvents=true (WatchList) sends the initial ADDED events and, with
    allowWatchBookmarks, the BOOKMARK annotated k8s.io/initial-events-end.
    Bookmarked watches also get a BOOKMARK about once a minute when the
    resource changed elsewhere, so idle informers resume from a recent
    resourceVersion. With a label selector, an object that stops matching is
    sent as DELETED and one that starts matching as ADDED.
  - resourceVersions carry the epoch of the server's history (its cache file),
    so replicas behind one APIService never misread each other's: a watch from
    another replica's (or a rebuilt cache's) resourceVersion answers 410 Gone
    and the client relists; a list serves the latest state (410 for Exact).
    See docs/storage.md, "resourceVersions across replicas".
  - The table of effective policies has the columns Name, Targets (target
    kinds), Policies (distinct source policies), Kinds (policy kinds,
    sorted), Age; that of policy reaches Name, Kinds, Targets and their
    count by outcome, Age. The four computed resources are in the kubectl
    category "gateway-api"; short names effpol, ceffpol, polreach and
    cpolreach.
  - API Priority and Fairness is disabled by default
    (--enable-priority-and-fairness=false): the kube-apiserver applies it before
    proxying to us, our requests are cheap in-memory reads, and enabling it
    would tie readiness to the flowcontrol.apiserver.k8s.io objects. The
    max-in-flight limits apply instead.
  - Sensitive fields (descriptor sensitiveFields): get, list and watch
    replace a covered leaf of an effective spec by "<redacted>" unless the
    authorizer lets the caller get the policy kind in the namespace of the
    policy that set it (Config.SensitiveFields, access.Redactor; decisions
    cached 10 s; see docs/reliability.md).
  - Objects get deterministic uids (derived from resource, namespace, name and
    creationTimestamp) so that replicas computing the same object agree.
*/
package apiserver
