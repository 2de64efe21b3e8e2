// Package vswitchd holds the Go models of the Open_vSwitch database, generated
// by libovsdb's modelgen from the schema installed with Debian bookworm's
// openvswitch-common 3.1.0 (/usr/share/openvswitch/vswitch.ovsschema,
// Open_vSwitch schema 8.3.1), copied here as vswitch.ovsschema. The
// generated files are committed: building needs no network and no OVS.
//
// To regenerate after replacing vswitch.ovsschema (modelgen is pinned as a
// tool dependency in go.mod, at libovsdb's version):
//
//	go generate ./ovs/vswitchd
package vswitchd

//go:generate go tool modelgen -p vswitchd -o . vswitch.ovsschema
