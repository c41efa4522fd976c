module github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/istio

go 1.26.0
