package mptcppm

import (
	"net"
	"slices"
	"testing"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

func TestFlags(t *testing.T) {
	b, err := FlagBits([]string{"subflow", "backup", "laminar"})
	if err != nil || b != FlagSubflow|FlagBackup|FlagLaminar {
		t.Fatalf("FlagBits: %#x, %v", b, err)
	}
	if got := FlagNames(b); !slices.Equal(got, []string{"subflow", "backup", "laminar"}) {
		t.Errorf("FlagNames(%#x) = %v", b, got)
	}
	if got := FlagNames(FlagSignal | 1<<7); !slices.Equal(got, []string{"signal", "0x80"}) {
		t.Errorf("unknown bit: %v", got)
	}
	if _, err := FlagBits([]string{"signal", "nope"}); err == nil {
		t.Error("unknown flag name: no error")
	}
	if b, err := FlagBits(nil); err != nil || b != 0 || FlagNames(0) != nil {
		t.Errorf("no flags: %#x %v %v", b, err, FlagNames(0))
	}
}

// TestEndpointAttrs round-trips endpoints through the attributes an add
// command sends and a dump answers with.
func TestEndpointAttrs(t *testing.T) {
	eps := []Endpoint{
		{ID: 2, Addr: net.ParseIP("10.74.2.1"), Flags: FlagSubflow, IfIndex: 3},
		{Addr: net.ParseIP("fd00::1"), Port: 8080, Flags: FlagSignal | FlagBackup},
	}
	var msgs []genetlink.Message
	for _, ep := range eps {
		b, err := endpointAttrs(ep)
		if err != nil {
			t.Fatal(err)
		}
		// The nested attribute carries NLA_F_NESTED, which strict
		// validation in the kernel requires.
		ad, err := netlink.NewAttributeDecoder(b)
		if err != nil || !ad.Next() || ad.TypeFlags()&netlink.Nested == 0 || ad.Type() != attrAddr {
			t.Fatalf("%+v: outer attribute not a nested MPTCP_PM_ATTR_ADDR (%v)", ep, err)
		}
		msgs = append(msgs, genetlink.Message{Data: b})
	}
	got, err := decodeEndpoints(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(eps) {
		t.Fatalf("%d endpoints, want %d", len(got), len(eps))
	}
	for i := range eps {
		w, g := eps[i], got[i]
		if g.ID != w.ID || !g.Addr.Equal(w.Addr) || g.Port != w.Port || g.Flags != w.Flags || g.IfIndex != w.IfIndex {
			t.Errorf("endpoint %d: %+v, want %+v", i, g, w)
		}
	}
	if len(got[0].Addr) != net.IPv4len {
		t.Errorf("IPv4 endpoint sent as %d bytes, want 4", len(got[0].Addr))
	}
}
