module github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kgateway

go 1.26.0
