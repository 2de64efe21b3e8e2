package ovs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/ovs/vswitchd"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// Create adds every bridge, port, interface, QoS, queue and controller of
// the lab in ONE transaction, which either commits whole or changes
// nothing, and returns the configuration number to pass to WaitApplied.
// A name that already exists in the database fails the transaction.
func (c *Client) Create(ctx context.Context, l *Lab) (int, error) {
	if err := l.Check(); err != nil {
		return 0, err
	}
	root, err := c.root(ctx)
	if err != nil {
		return 0, err
	}
	rows, bridges := l.rows()
	ops, err := c.inserts(rows)
	if err != nil {
		return 0, err
	}
	mut, err := c.c.Where(root).Mutate(root, model.Mutation{Field: &root.Bridges, Mutator: ovsdb.MutateOperationInsert, Value: bridges})
	if err != nil {
		return 0, err
	}
	return c.transactCfg(ctx, root, append(ops, mut...))
}

// inserts returns one insert operation per row (libovsdb's Create takes
// rows of one table at a time).
func (c *Client) inserts(rows []model.Model) ([]ovsdb.Operation, error) {
	var ops []ovsdb.Operation
	for _, r := range rows {
		o, err := c.c.Create(r)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o...)
	}
	return ops, nil
}

// WaitInterfaces waits until ovs-vswitchd has given every named interface
// an OpenFlow port or an error, and returns the failures (name: error),
// sorted. ctx bounds the wait.
func (c *Client) WaitInterfaces(ctx context.Context, names []string) ([]string, error) {
	var bad []string
	check := func() bool {
		var ifs []vswitchd.Interface
		if err := c.c.List(ctx, &ifs); err != nil {
			return false
		}
		by := map[string]*vswitchd.Interface{}
		for i := range ifs {
			by[ifs[i].Name] = &ifs[i]
		}
		bad = bad[:0]
		done := true
		for _, n := range names {
			ifc := by[n]
			switch {
			case ifc == nil:
				done = false
			case ifc.Error != nil && *ifc.Error != "":
				bad = append(bad, n+": "+*ifc.Error)
			case ifc.Ofport == nil || *ifc.Ofport == 0:
				done = false
			case *ifc.Ofport < 0:
				bad = append(bad, n+": no OpenFlow port (ofport -1)")
			}
		}
		return done
	}
	if err := c.waitCache(ctx, check); err != nil {
		return nil, fmt.Errorf("ovs-vswitchd did not attach every port in time: %w", err)
	}
	sort.Strings(bad)
	return bad, nil
}

// rowsOf lists the rows of every table emuctl writes that carry marker
// (or, with marker "", any emuctl marker).
type marked struct {
	bridges    []vswitchd.Bridge
	ports      []vswitchd.Port
	ifaces     []vswitchd.Interface
	qos        []vswitchd.QoS
	queues     []vswitchd.Queue
	ctrls      []vswitchd.Controller
	byMarker   map[string]int
	markerOfBr map[string]string
}

func ours(ids map[string]string, marker string) (string, bool) {
	m, ok := ids[MarkerKey]
	if !ok || !strings.HasPrefix(m, "emuctl:") {
		return "", false
	}
	return m, marker == "" || m == marker
}

func (c *Client) marked(ctx context.Context, marker string) (*marked, error) {
	m := &marked{byMarker: map[string]int{}, markerOfBr: map[string]string{}}
	var (
		brs  []vswitchd.Bridge
		ps   []vswitchd.Port
		is   []vswitchd.Interface
		qs   []vswitchd.QoS
		qus  []vswitchd.Queue
		cts  []vswitchd.Controller
		errs []error
	)
	errs = append(errs, c.c.List(ctx, &brs), c.c.List(ctx, &ps), c.c.List(ctx, &is), c.c.List(ctx, &qs), c.c.List(ctx, &qus), c.c.List(ctx, &cts))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, r := range brs {
		if k, ok := ours(r.ExternalIDs, marker); ok {
			m.bridges = append(m.bridges, r)
			m.byMarker[k]++
			m.markerOfBr[r.UUID] = k
		}
	}
	for _, r := range ps {
		if k, ok := ours(r.ExternalIDs, marker); ok {
			m.ports = append(m.ports, r)
			m.byMarker[k]++
		}
	}
	for _, r := range is {
		if k, ok := ours(r.ExternalIDs, marker); ok {
			m.ifaces = append(m.ifaces, r)
			m.byMarker[k]++
		}
	}
	for _, r := range qs {
		if k, ok := ours(r.ExternalIDs, marker); ok {
			m.qos = append(m.qos, r)
			m.byMarker[k]++
		}
	}
	for _, r := range qus {
		if k, ok := ours(r.ExternalIDs, marker); ok {
			m.queues = append(m.queues, r)
			m.byMarker[k]++
		}
	}
	for _, r := range cts {
		if k, ok := ours(r.ExternalIDs, marker); ok {
			m.ctrls = append(m.ctrls, r)
			m.byMarker[k]++
		}
	}
	return m, nil
}

// Markers counts the rows carrying each emuctl marker ("emuctl:<lab>").
func (c *Client) Markers(ctx context.Context) (map[string]int, error) {
	m, err := c.marked(ctx, "")
	if err != nil {
		return nil, err
	}
	return m.byMarker, nil
}

// Delete removes every row that carries marker — bridges, ports,
// interfaces, QoS, queues, controllers — in ONE transaction and returns
// how many rows it deleted and the configuration number to wait for (0
// when there was nothing to delete). Rows without the marker are never
// touched; a port a user added to one of emuctl's bridges goes with the
// bridge, as OVS garbage-collects it.
func (c *Client) Delete(ctx context.Context, marker string) (int, int, error) {
	if !strings.HasPrefix(marker, "emuctl:") || len(marker) <= len("emuctl:") {
		return 0, 0, fmt.Errorf("refusing to delete by marker %q", marker)
	}
	m, err := c.marked(ctx, marker)
	if err != nil {
		return 0, 0, err
	}
	n := m.byMarker[marker]
	if n == 0 {
		return 0, 0, nil
	}
	root, err := c.root(ctx)
	if err != nil {
		return 0, 0, err
	}
	var ops []ovsdb.Operation
	var brUUIDs []string
	for i := range m.bridges {
		brUUIDs = append(brUUIDs, m.bridges[i].UUID)
	}
	if len(brUUIDs) > 0 {
		mut, err := c.c.Where(root).Mutate(root, model.Mutation{Field: &root.Bridges, Mutator: ovsdb.MutateOperationDelete, Value: brUUIDs})
		if err != nil {
			return 0, 0, err
		}
		ops = append(ops, mut...)
	}
	// Every marked row is deleted explicitly, so references between them
	// (bridge -> port -> QoS -> queue) vanish together and the QoS and
	// Queue rows, which OVSDB does not garbage-collect, go too.
	del := func(models ...model.Model) error {
		for _, md := range models {
			o, err := c.c.Where(md).Delete()
			if err != nil {
				return err
			}
			ops = append(ops, o...)
		}
		return nil
	}
	for i := range m.bridges {
		if err := del(&m.bridges[i]); err != nil {
			return 0, 0, err
		}
	}
	for i := range m.ports {
		if err := del(&m.ports[i]); err != nil {
			return 0, 0, err
		}
	}
	for i := range m.ifaces {
		if err := del(&m.ifaces[i]); err != nil {
			return 0, 0, err
		}
	}
	for i := range m.qos {
		if err := del(&m.qos[i]); err != nil {
			return 0, 0, err
		}
	}
	for i := range m.queues {
		if err := del(&m.queues[i]); err != nil {
			return 0, 0, err
		}
	}
	for i := range m.ctrls {
		if err := del(&m.ctrls[i]); err != nil {
			return 0, 0, err
		}
	}
	cfg, err := c.transactCfg(ctx, root, ops)
	return n, cfg, err
}
