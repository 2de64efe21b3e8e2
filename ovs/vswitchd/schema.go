package vswitchd

import _ "embed"

// SchemaFile is the Open_vSwitch schema the models were generated from. emuctl
// creates its embedded database from the installed schema when there is
// one, and from this copy otherwise.
//
//go:embed vswitch.ovsschema
var SchemaFile []byte
