package shape

// exceptions are what is over a limit, at the size it has now. An entry may
// only shrink: the test fails when one grows, and when one shrinks or goes
// without its entry being lowered or removed.
var exceptions = map[string]int{}
