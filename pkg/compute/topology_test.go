package compute
