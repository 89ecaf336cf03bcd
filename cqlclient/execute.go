package cqlclient

import (
	"context"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// QueryOptions are a QUERY's or an EXECUTE's consistency, values, paging
// and flags, as the protocol library encodes them. The zero value asks for
// consistency ANY, which suits writes only: set Consistency.
type QueryOptions = message.QueryOptions

// Query runs a CQL statement with opts (nil for consistency ONE and no
// values) and returns its RESULT: *message.VoidResult,
// *message.RowsResult, *message.SetKeyspaceResult or
// *message.SchemaChangeResult. An ERROR answer is a *ServerError. Query
// keeps opts only until it returns: the caller may reuse it (and the
// values in it) for the next request.
func (c *Conn) Query(ctx context.Context, query string, opts *QueryOptions) (message.Result, error) {
	return c.result(ctx, &message.Query{Query: query, Options: withDefaults(opts)})
}

// Execute runs the prepared statement p with opts (nil for consistency ONE
// and no values), as Query does. An UNPREPARED answer (the server forgot
// p) is a *ServerError whose Msg is a *message.Unprepared: prepare again.
func (c *Conn) Execute(ctx context.Context, p *Prepared, opts *QueryOptions) (message.Result, error) {
	return c.result(ctx, &message.Execute{QueryId: p.ID, ResultMetadataId: p.ResultMetadataID, Options: withDefaults(opts)})
}

func withDefaults(opts *QueryOptions) *QueryOptions {
	if opts == nil {
		return &QueryOptions{Consistency: primitive.ConsistencyLevelOne}
	}
	return opts
}

func (c *Conn) result(ctx context.Context, req message.Message) (message.Result, error) {
	msg, err := c.roundTrip(ctx, req)
	if err != nil {
		return nil, err
	}
	r, ok := msg.(message.Result)
	if !ok {
		return nil, fmt.Errorf("cqlclient: %v answered %v", req, msg)
	}
	return r, nil
}
