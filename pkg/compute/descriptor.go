package compute

// Descriptor describes one policy kind (SPEC §4).
type Descriptor struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

// LoadDescriptors parses a versioned descriptor configuration file.
func LoadDescriptors(data []byte) ([]Descriptor, error) { return nil, nil }

// BuiltinDescriptors returns the built-in descriptors (SPEC §4.1 list).
func BuiltinDescriptors() []Descriptor { return nil }
