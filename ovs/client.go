package ovs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/emuctl/emuctl/ovs/vswitchd"
	"github.com/go-logr/logr"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

// Client is a connection to one Open_vSwitch database with a cache of the
// tables emuctl reads (Open_vSwitch, Bridge, Port, Interface, QoS, Queue,
// Controller), kept current by an OVSDB monitor.
type Client struct {
	c        client.Client
	Endpoint string // "unix:/run/openvswitch/db.sock"
}

// Dial connects to the OVSDB server at endpoint ("unix:PATH") and starts
// monitoring. The context bounds the connection attempt.
func Dial(ctx context.Context, endpoint string) (*Client, error) {
	dbModel, err := vswitchd.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	discard := logr.Discard()
	c, err := client.NewOVSDBClient(dbModel, client.WithEndpoint(endpoint), client.WithLogger(&discard))
	if err != nil {
		return nil, err
	}
	if err := c.Connect(ctx); err != nil {
		return nil, fmt.Errorf("ovsdb %s: %w", endpoint, err)
	}
	_, err = c.Monitor(ctx, c.NewMonitor(
		client.WithTable(&vswitchd.OpenvSwitch{}),
		client.WithTable(&vswitchd.Bridge{}),
		client.WithTable(&vswitchd.Port{}),
		client.WithTable(&vswitchd.Interface{}),
		client.WithTable(&vswitchd.QoS{}),
		client.WithTable(&vswitchd.Queue{}),
		client.WithTable(&vswitchd.Controller{}),
	))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("ovsdb %s: monitor: %w", endpoint, err)
	}
	return &Client{c: c, Endpoint: endpoint}, nil
}

// Close ends the connection.
func (c *Client) Close() { c.c.Close() }

// ErrNoRoot means the database has no Open_vSwitch row: nobody
// initialised it (ovs-vsctl init, or emuctl for its embedded database).
var ErrNoRoot = errors.New("the Open_vSwitch table has no row (database not initialised)")

func (c *Client) root(ctx context.Context) (*vswitchd.OpenvSwitch, error) {
	var roots []vswitchd.OpenvSwitch
	if err := c.c.List(ctx, &roots); err != nil {
		return nil, err
	}
	if len(roots) == 0 {
		return nil, ErrNoRoot
	}
	return &roots[0], nil
}

// Initialized reports ErrNoRoot when nobody initialised the database.
func (c *Client) Initialized(ctx context.Context) error {
	_, err := c.root(ctx)
	return err
}

// Version returns the OVS version ovs-vswitchd recorded ("" when unknown).
func (c *Client) Version(ctx context.Context) string {
	r, err := c.root(ctx)
	if err != nil || r.OVSVersion == nil {
		return ""
	}
	return *r.OVSVersion
}

// Init inserts the Open_vSwitch row when the database has none, as
// `ovs-vsctl init` does. emuctl calls it for its embedded database only.
func (c *Client) Init(ctx context.Context) error {
	if _, err := c.root(ctx); !errors.Is(err, ErrNoRoot) {
		return err
	}
	ops, err := c.c.Create(&vswitchd.OpenvSwitch{UUID: "root"})
	if err != nil {
		return err
	}
	if _, err := c.transact(ctx, ops); err != nil {
		return err
	}
	return c.waitCache(ctx, func() bool { _, err := c.root(ctx); return err == nil })
}

// transact runs ops and turns per-operation failures into one error.
func (c *Client) transact(ctx context.Context, ops []ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	res, err := c.c.Transact(ctx, ops...)
	if err != nil {
		return nil, fmt.Errorf("ovsdb transaction: %w", err)
	}
	if opErrs, err := ovsdb.CheckOperationResults(res, ops); err != nil {
		var msgs []string
		for _, e := range opErrs {
			msgs = append(msgs, e.Error())
		}
		if len(msgs) == 0 {
			msgs = append(msgs, err.Error())
		}
		sort.Strings(msgs)
		return nil, fmt.Errorf("ovsdb transaction failed: %v", msgs)
	}
	return res, nil
}

// bumpCfg returns the operations that ask ovs-vswitchd to report when it
// has applied this transaction: next_cfg + 1, then read it back (the last
// result's first row).
func (c *Client) bumpCfg(root *vswitchd.OpenvSwitch) ([]ovsdb.Operation, error) {
	ops, err := c.c.Where(root).Mutate(root, model.Mutation{Field: &root.NextCfg, Mutator: ovsdb.MutateOperationAdd, Value: 1})
	if err != nil {
		return nil, err
	}
	return append(ops, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: vswitchd.OpenvSwitchTable,
		Where: []ovsdb.Condition{}, Columns: []string{"next_cfg"}}), nil
}

// transactCfg runs ops with bumpCfg's operations after them, in one
// transaction, and returns the next_cfg that ovs-vswitchd reports once
// it has applied them (WaitApplied).
func (c *Client) transactCfg(ctx context.Context, root *vswitchd.OpenvSwitch, ops []ovsdb.Operation) (int, error) {
	cfg, err := c.bumpCfg(root)
	if err != nil {
		return 0, err
	}
	res, err := c.transact(ctx, append(ops, cfg...))
	if err != nil {
		return 0, err
	}
	return nextCfg(res), nil
}

func nextCfg(res []ovsdb.OperationResult) int {
	if len(res) == 0 {
		return 0
	}
	last := res[len(res)-1]
	if len(last.Rows) == 0 {
		return 0
	}
	switch v := last.Rows[0]["next_cfg"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// Sync bumps next_cfg and waits until ovs-vswitchd has caught up: proof
// that a switch daemon is attached and working.
func (c *Client) Sync(ctx context.Context) error {
	root, err := c.root(ctx)
	if err != nil {
		return err
	}
	cfg, err := c.transactCfg(ctx, root, nil)
	if err != nil {
		return err
	}
	return c.WaitApplied(ctx, cfg)
}

// ErrNotApplied means ovs-vswitchd did not confirm a configuration in
// time: it is not running, or it is stuck.
var ErrNotApplied = errors.New("ovs-vswitchd did not apply the configuration")

// WaitApplied returns once ovs-vswitchd reports cur_cfg >= cfg, or when
// ctx ends (with ErrNotApplied).
func (c *Client) WaitApplied(ctx context.Context, cfg int) error {
	err := c.waitCache(ctx, func() bool {
		r, err := c.root(ctx)
		return err == nil && r.CurCfg >= cfg
	})
	if err != nil {
		cur := -1
		if r, rerr := c.root(context.Background()); rerr == nil {
			cur = r.CurCfg
		}
		return fmt.Errorf("%w (waited for cur_cfg %d, at %d): is ovs-vswitchd running for %s?", ErrNotApplied, cfg, cur, c.Endpoint)
	}
	return nil
}

// waitCache polls cond on the monitor cache until it holds or ctx ends.
func (c *Client) waitCache(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
