"""Benchmarks: research (the default), perf, model, verify, multi; and the scripted Ollama server."""
