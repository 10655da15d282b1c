package cayley

import (
	"context"
	"fmt"
	"io"

	"github.com/cayleygraph/quad"
	"github.com/cayleygraph/quad/nquads"

	"github.com/phc-project/phc/graph"
)

// WriteNQuads writes every edge of the graph as N-Quads, sorted, with ids
// as urn:phc: IRIs. The watermark is written last, as a quad of its own.
func (g *Graph) WriteNQuads(ctx context.Context, w io.Writer) error {
	var es []graph.Edge
	if err := g.Each(ctx, func(e graph.Edge) error {
		es = append(es, e)
		return nil
	}); err != nil {
		return err
	}
	wm, err := g.Watermark()
	if err != nil {
		return err
	}
	graph.SortEdges(es)
	nw := nquads.NewWriter(w)
	for _, e := range es {
		if err := nw.WriteQuad(quadOf(e)); err != nil {
			return fmt.Errorf("graph: export: %w", err)
		}
	}
	if err := nw.WriteQuad(watermarkQuad(wm)); err != nil {
		return fmt.Errorf("graph: export: %w", err)
	}
	if err := nw.Close(); err != nil {
		return fmt.Errorf("graph: export: %w", err)
	}
	return nil
}

var _ quad.Writer = (*nquads.Writer)(nil)
