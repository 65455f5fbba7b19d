"""toolrelay's version, in a module of its own so every layer can import it without the
package root (which would pull the public API in)."""

__version__ = "0.1.0"
