"""What flows through a saturate session: settings, records, graph state, runtime context."""

from state.context import Context, SearchSource, PageStore
from state.records import AgentResult, RoundRecord, SearchResult, SourceRef
from state.settings import Settings, SettingsError, load_settings
from state.graph_state import ResearchState, initial_state

__all__ = [
    "AgentResult",
    "Context",
    "PageStore",
    "ResearchState",
    "RoundRecord",
    "SearchResult",
    "SearchSource",
    "Settings",
    "SettingsError",
    "SourceRef",
    "initial_state",
    "load_settings",
]
