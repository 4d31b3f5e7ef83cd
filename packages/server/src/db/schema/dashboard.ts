/** The dashboard module's table (modules/dashboard): signed-in operators. */
export interface DashboardDatabase {
  dashboard_sessions: DashboardSessionsTable;
}

/** A signed-in operator dashboard (docs/adr/0012-dashboard.md); the cookie token only as its hash. */
export interface DashboardSessionsTable {
  /** SHA-256 (hex) of the cookie token. */
  token_hash: string;
  project_id: string;
  /** The secret key (`key_…`) the operator signed in with; never the key itself. */
  key_id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  expires_at: string;
  /** Set by sign out. */
  ended_at: string | null;
}
