package ovs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/ovs/vswitchd"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// A running lab gains and loses bridges and ports (emuctl node add|del,
// link add|del). Add and Remove are Create and Delete for a part of a
// lab: one transaction each, all or nothing, and only rows that carry the
// lab's marker are ever touched.

// Add adds l's rows in ONE transaction. A bridge of l whose name is in
// existing is one of the lab's already (its row must carry l.Marker):
// only its ports in l are added to it. The other bridges are created
// whole, as by Create. A linux-noop QoS the lab has is shared by the new
// ports that need one. It returns the configuration number to pass to
// WaitApplied.
func (c *Client) Add(ctx context.Context, l *Lab, existing []string) (int, error) {
	if err := l.Check(); err != nil {
		return 0, err
	}
	root, err := c.root(ctx)
	if err != nil {
		return 0, err
	}
	m, err := c.marked(ctx, l.Marker)
	if err != nil {
		return 0, err
	}
	have := map[string]*vswitchd.Bridge{}
	for i := range m.bridges {
		have[m.bridges[i].Name] = &m.bridges[i]
	}
	ex := map[string]bool{}
	for _, name := range existing {
		if have[name] == nil {
			return 0, fmt.Errorf("bridge %s of %s is not in the database", name, l.Marker)
		}
		ex[name] = true
	}
	noop := ""
	for _, q := range m.qos {
		if q.Type == QoSNoop {
			noop = q.UUID
			break
		}
	}
	rows, bridges, added := l.rowsAdding(ex, noop)
	ops, err := c.inserts(rows)
	if err != nil {
		return 0, err
	}
	if len(bridges) > 0 {
		mut, err := c.c.Where(root).Mutate(root, model.Mutation{Field: &root.Bridges, Mutator: ovsdb.MutateOperationInsert, Value: bridges})
		if err != nil {
			return 0, err
		}
		ops = append(ops, mut...)
	}
	names := make([]string, 0, len(added))
	for name := range added {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if len(added[name]) == 0 {
			continue
		}
		br := have[name]
		mut, err := c.c.Where(br).Mutate(br, model.Mutation{Field: &br.Ports, Mutator: ovsdb.MutateOperationInsert, Value: added[name]})
		if err != nil {
			return 0, err
		}
		ops = append(ops, mut...)
	}
	return c.transactCfg(ctx, root, ops)
}

// Remove deletes in ONE transaction the bridges named in bridges (with
// their ports, interfaces and controllers) and the ports named in ports
// (from whatever bridge holds them, with their interfaces), and the QoS
// and Queue rows that no remaining port uses — every one of them only if
// it carries marker; a row without it is never touched (a port a user
// added to one of the lab's bridges goes with the bridge, as OVS
// garbage-collects it). Names that are not there are skipped. It returns
// how many rows it deleted and the configuration number to wait for (0
// when there was nothing to delete).
func (c *Client) Remove(ctx context.Context, marker string, bridges, ports []string) (int, int, error) {
	if !strings.HasPrefix(marker, "emuctl:") || len(marker) <= len("emuctl:") {
		return 0, 0, fmt.Errorf("refusing to delete by marker %q", marker)
	}
	m, err := c.marked(ctx, marker)
	if err != nil {
		return 0, 0, err
	}
	root, err := c.root(ctx)
	if err != nil {
		return 0, 0, err
	}
	var all []vswitchd.Port
	if err := c.c.List(ctx, &all); err != nil {
		return 0, 0, err
	}
	portBy := map[string]*vswitchd.Port{}
	for i := range all {
		portBy[all[i].UUID] = &all[i]
	}
	var ops []ovsdb.Operation
	del := func(md model.Model) error {
		o, err := c.c.Where(md).Delete()
		if err == nil {
			ops = append(ops, o...)
		}
		return err
	}
	n := 0
	gone := map[string]bool{} // port UUIDs
	var brUUIDs []string
	for i := range m.bridges {
		b := &m.bridges[i]
		if !slices.Contains(bridges, b.Name) {
			continue
		}
		brUUIDs = append(brUUIDs, b.UUID)
		if err := del(b); err != nil {
			return 0, 0, err
		}
		n++
		for _, pu := range b.Ports {
			gone[pu] = true
		}
		for j := range m.ctrls {
			if slices.Contains(b.Controller, m.ctrls[j].UUID) {
				if err := del(&m.ctrls[j]); err != nil {
					return 0, 0, err
				}
				n++
			}
		}
	}
	if len(brUUIDs) > 0 {
		mut, err := c.c.Where(root).Mutate(root, model.Mutation{Field: &root.Bridges, Mutator: ovsdb.MutateOperationDelete, Value: brUUIDs})
		if err != nil {
			return 0, 0, err
		}
		ops = append(ops, mut...)
	}
	// ports named, out of bridges that stay
	var named []string
	for i := range m.ports {
		if slices.Contains(ports, m.ports[i].Name) && !gone[m.ports[i].UUID] {
			named = append(named, m.ports[i].UUID)
			gone[m.ports[i].UUID] = true
		}
	}
	for i := range m.bridges {
		b := &m.bridges[i]
		if slices.Contains(brUUIDs, b.UUID) {
			continue
		}
		var out []string
		for _, pu := range b.Ports {
			if slices.Contains(named, pu) {
				out = append(out, pu)
			}
		}
		if len(out) > 0 {
			mut, err := c.c.Where(b).Mutate(b, model.Mutation{Field: &b.Ports, Mutator: ovsdb.MutateOperationDelete, Value: out})
			if err != nil {
				return 0, 0, err
			}
			ops = append(ops, mut...)
		}
	}
	goneIfs := map[string]bool{}
	for i := range m.ports {
		if gone[m.ports[i].UUID] {
			if err := del(&m.ports[i]); err != nil {
				return 0, 0, err
			}
			n++
			for _, iu := range m.ports[i].Interfaces {
				goneIfs[iu] = true
			}
		}
	}
	for i := range m.ifaces {
		if goneIfs[m.ifaces[i].UUID] {
			if err := del(&m.ifaces[i]); err != nil {
				return 0, 0, err
			}
			n++
		}
	}
	// QoS and Queue rows are roots (OVSDB keeps them unreferenced): the
	// lab's that only removed ports used go with them.
	usedQoS := map[string]bool{}
	for _, p := range all {
		if p.QOS != nil && !gone[p.UUID] {
			usedQoS[*p.QOS] = true
		}
	}
	freed := map[string]bool{}
	for _, p := range all {
		if p.QOS != nil && gone[p.UUID] && !usedQoS[*p.QOS] {
			freed[*p.QOS] = true
		}
	}
	usedQueue := map[string]bool{}
	for i := range m.qos {
		q := &m.qos[i]
		if !freed[q.UUID] {
			for _, u := range q.Queues {
				usedQueue[u] = true
			}
			continue
		}
		if err := del(q); err != nil {
			return 0, 0, err
		}
		n++
	}
	for i := range m.qos {
		if !freed[m.qos[i].UUID] {
			continue
		}
		for _, u := range m.qos[i].Queues {
			if usedQueue[u] {
				continue
			}
			for j := range m.queues {
				if m.queues[j].UUID == u {
					if err := del(&m.queues[j]); err != nil {
						return 0, 0, err
					}
					n++
				}
			}
		}
	}
	if n == 0 {
		return 0, 0, nil
	}
	cfg, err := c.transactCfg(ctx, root, ops)
	return n, cfg, err
}
