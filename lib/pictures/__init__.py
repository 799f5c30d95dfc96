"""How the book draws: `figures` (its matplotlib look, for the chapters' static figures) and
`charts` (small SVG charts, for the explorers' pictures)."""
