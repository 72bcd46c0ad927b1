"""Framework -> IR. One module per framework; each imports its framework lazily."""
