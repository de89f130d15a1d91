"""What flows through a saturate session: settings, records, graph state, runtime context."""

from saturate.state.context import Context, SearchSource, PageStore
from saturate.state.records import AgentResult, RoundRecord, SearchResult, SourceRef
from saturate.state.settings import Settings, SettingsError, load_settings
from saturate.state.graph_state import ResearchState, initial_state

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
