"""One module per node of a round: (state, runtime) -> partial state update."""
