"""Test doubles: `fault_server` (flaky OpenAI/Ollama-compatible chat server)."""
