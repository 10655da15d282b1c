package mcpserver

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phc-project/phc/custodian"
)

// Public is the MCP server of a host that holds no token (phc mcp started
// without one): the same tools, resources and prompts as [New]'s, of which
// only context_status — public in PCP §9 ("works without authentication")
// — answers, with what status returns. Every other tool answers the tool
// error unauthenticated, and every resource is not found, as for a caller
// who may read nothing. log receives error details; nil discards.
func Public(status func(context.Context) (any, error), log *slog.Logger) *mcp.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{log: log}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "phc", Title: "phc personal context custodian", Version: Version},
		&mcp.ServerOptions{Logger: log, Instructions: instructions})
	for _, t := range s.tools() {
		name := t.def.Name
		if name == "context_status" {
			s.mcp.AddTool(t.def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{}
				if err := args(req.Params.Arguments, &in); err != nil {
					return s.toolError(name, err), nil
				}
				v, err := status(ctx)
				if err != nil {
					return s.toolError(name, &custodian.Error{Op: name, Kind: custodian.KindInternal, Err: err}), nil
				}
				return result(v)
			})
			continue
		}
		s.mcp.AddTool(t.def, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.toolError(name, &custodian.Error{Op: name, Kind: custodian.KindUnauthenticated,
				Public: "no token: start the server with the app's service token (PHC_TOKEN or --token; see phc token)"}), nil
		})
	}
	s.addResources()
	s.addPrompts()
	return s.mcp
}
