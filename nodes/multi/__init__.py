"""The multi-source nodes: plan, source_loop, merge, breadcrumbs, follow, triangulate, profiles, decide."""
