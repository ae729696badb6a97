"""Words the generator combines into people, projects, issues, comments and merge requests."""

from __future__ import annotations

FIRST_NAMES = (
    "Aisha", "Ben", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Lars", "Maya",
    "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wei", "Ximena", "Yusuf", "Zoe",
    "Arjun", "Bianca", "Chen", "Dana", "Emil", "Fatima", "Gustavo", "Hanna", "Ivan", "Julia",
)
LAST_NAMES = (
    "Adeyemi", "Berg", "Castillo", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen", "Kowalski",
    "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi", "Schmidt", "Tanaka", "Ueda", "Varga",
    "Weber", "Xu", "Yilmaz", "Zhang", "Novak", "Costa", "Murphy", "Singh",
)
BIOS = (
    "Backend developer. Coffee, queues and quiet on-call weeks.",
    "Frontend engineer who cares about accessibility.",
    "Site reliability engineer. Ask me about alerts.",
    "Technical writer turning tribal knowledge into docs.",
    "Data engineer; pipelines, schemas and the occasional dashboard.",
    "Mobile developer (iOS and Android).",
    "Product designer who also writes CSS.",
    "QA engineer. If it can break, I will find out how.",
    "",
)

GROUPS = ("platform", "webteam", "data-eng", "mobile", "infra", "docs-team")

PROJECT_NAMES = (
    "billing-service", "design-tokens", "release-tools", "status-page", "api-gateway", "search-indexer",
    "mobile-app", "customer-portal", "feature-flags", "log-shipper", "metrics-exporter", "onboarding-guide",
    "auth-service", "image-resizer", "notification-hub", "style-guide", "terraform-modules", "ci-templates",
    "analytics-etl", "report-builder", "chat-widget", "cli-toolkit", "config-loader", "dev-handbook",
    "email-templates", "geo-lookup", "invoice-pdf", "kanban-board", "load-tester", "markdown-preview",
    "payment-sdk", "queue-worker", "rate-limiter", "schema-registry", "uptime-monitor", "web-components",
)
PROJECT_PURPOSES = (
    "Handles {topic} for the rest of the platform.",
    "A small, well-tested library for {topic}.",
    "Internal tooling for {topic}.",
    "The service behind {topic}, with its deployment scripts.",
    "Documentation and examples for {topic}.",
)
TOPICS = (
    "invoicing and payment retries", "shared colours, spacing and type scales", "cutting and tagging releases",
    "public incident updates", "routing and authentication of API calls", "full-text search over documents",
    "our iOS and Android apps", "the customer self-service area", "rolling out features gradually",
    "shipping logs to the central store", "exporting service metrics", "new joiners' first weeks",
)

# (title, colour, description)
LABELS = (
    ("bug", "#d9534f", "Something is not working"),
    ("feature", "#428bca", "A new capability"),
    ("enhancement", "#5cb85c", "An improvement to something that exists"),
    ("documentation", "#8e44ad", "Docs, guides and comments"),
    ("good first issue", "#7f8c8d", "Small and well described: a good start"),
    ("help wanted", "#f0ad4e", "Extra attention is needed"),
    ("priority::high", "#cc0033", "Fix soon"),
    ("priority::low", "#a8d695", "Whenever there is time"),
    ("security", "#ad4363", "Security-relevant"),
    ("performance", "#ed9121", "Speed and resource use"),
    ("ui", "#69d100", "User interface"),
    ("backend", "#330066", "Server-side code"),
    ("question", "#d1d100", "Further information is requested"),
    ("wontfix", "#ffffff", "This will not be worked on"),
)
MILESTONE_TITLES = ("v1.0", "v1.1", "v1.2", "v2.0", "Sprint 14", "Sprint 15", "Q3 cleanup", "Beta launch")

ISSUE_TEMPLATES = (
    "Fix crash when {action} in {component}",
    "{component}: {action} is slow on large accounts",
    "Add {feature} to {component}",
    "Document how {action} works",
    "Error 500 after {action}",
    "Support {feature} in {component}",
    "{component} ignores {setting}",
    "Flaky test around {action}",
    "Improve error message when {action} fails",
    "Remove deprecated {setting} from {component}",
    "Upgrade dependencies of {component}",
    "Keyboard navigation broken in {component}",
)
COMPONENTS = (
    "the settings page", "the dashboard", "the login form", "the API client", "the export job", "the sidebar",
    "the admin panel", "the search box", "the notifications list", "the CLI", "the webhook handler", "the cache layer",
)
ACTIONS = (
    "saving a draft", "uploading an avatar", "renaming a project", "exporting to CSV", "changing the password",
    "importing users", "deleting a comment", "switching the language", "refreshing the token", "sorting by date",
)
FEATURES = (
    "dark mode", "pagination", "bulk editing", "a retry button", "SSO login", "CSV import", "rate limiting",
    "audit logs", "keyboard shortcuts", "an undo action",
)
SETTINGS = ("the timeout setting", "the proxy variable", "the locale option", "the page size", "the retry limit")

DESCRIPTION_OPENINGS = (
    "Steps to reproduce are below.", "Reported by a customer this week.", "Noticed while reviewing the logs.",
    "This came up in the last retro.", "Several people have asked about this.",
)
DESCRIPTION_DETAILS = (
    "It happens every time on the staging environment.",
    "It only happens with accounts that have more than a hundred projects.",
    "The browser console shows a TypeError.",
    "Expected: the change is saved. Actual: nothing happens.",
    "We should add a regression test once this is fixed.",
    "The old behaviour was documented, so this is a breaking change.",
    "A workaround is to reload the page.",
)
COMMENTS = (
    "I can reproduce this on the main branch.",
    "Thanks for the report! Looking into it.",
    "Could you share the full log output?",
    "This looks like a duplicate of an older issue.",
    "I have a fix in progress, will open a merge request soon.",
    "Confirmed, and it also affects the mobile app.",
    "Let's discuss this in the next planning meeting.",
    "The fix is deployed to staging, please verify.",
    "Not sure this is worth the complexity.",
    "+1, we hit this as well.",
)
BRANCH_PREFIXES = ("feature", "fix", "chore", "docs", "refactor")
MR_VERBS = ("Add", "Fix", "Refactor", "Update", "Remove", "Speed up")
MR_OBJECTS = (
    "retry logic", "the settings form", "CI pipeline config", "API pagination", "error handling", "README",
    "database migrations", "unit tests", "logging format", "the release script", "type hints", "docker image",
)
