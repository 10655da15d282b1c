package graph

import (
	"context"
	"fmt"
	"io"

	"github.com/cayleygraph/quad"
	"github.com/cayleygraph/quad/nquads"
)

// WriteNQuads writes every edge of the graph as N-Quads, sorted, with ids
// as urn:phc: IRIs. The watermark is written last, as a quad of its own.
func (g *Graph) WriteNQuads(ctx context.Context, w io.Writer) error {
	var es []Edge
	if err := g.Each(ctx, func(e Edge) error {
		es = append(es, e)
		return nil
	}); err != nil {
		return err
	}
	wm, err := g.Watermark()
	if err != nil {
		return err
	}
	sortEdges(es)
	nw := nquads.NewWriter(w)
	for _, e := range es {
		if err := nw.WriteQuad(e.quad()); err != nil {
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
