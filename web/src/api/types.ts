// Wire types of the AgentMail HTTP API, mirroring client/types.go field for
// field (snake_case JSON, times as RFC 3339 strings). docs/API.md names the
// route of each. Only what the page reads or sends is spelled out.

/** ErrorBody is the JSON shape of every error answer (W-9). */
export interface ErrorBody {
  error: string
  code: string
  field?: string
  suggestion?: string
  retry_after_seconds?: number
}

// Each interface below has the name and fields of the Go type of the same
// name in client/types.go, where units and rules are documented.

export type Role = 'admin' | 'user'

export interface LoginResponse {
  username: string
  role: Role
  csrf_token: string
}

export interface ChangePasswordRequest {
  current_password: string
  new_password: string
}

export interface Me {
  username: string
  role: Role
  auth_kind: 'cookie' | 'user_key'
  csrf_token?: string
}

export type Lifecycle = 'permanent' | 'one_time' | 'timed'

export interface CreateUserKeyRequest {
  label: string
  lifecycle: Lifecycle
  expires_at?: string
}

export interface CreateAgentKeyRequest {
  agent_name: string
  key_token?: string
  label?: string
  lifecycle: Lifecycle
  expires_at?: string
}

export interface KeyInfo {
  key_id: string
  kind: 'agent' | 'user'
  owner: string
  label: string
  lifecycle: Lifecycle
  prefix: string
  expires_at?: string
  created_at: string
  last_used_at?: string
  revoked_at?: string
  active: boolean
}

export interface CreatedKey extends KeyInfo {
  key_token?: string
}

export interface KeyList {
  keys: KeyInfo[]
}

export interface User {
  username: string
  role: Role
  disabled: boolean
  created_at: string
}

export interface CreateUserRequest {
  username: string
  password: string
  role: Role
}

export interface UpdateUserRequest {
  disabled?: boolean
  password?: string
  role?: Role
}

export interface UserList {
  users: User[]
}

export interface Agent {
  name: string
  platform: string
  status: 'online' | 'offline'
  last_seen?: string
  default_rounds: number
  registered_at?: string
}

export interface AgentList {
  agents: Agent[]
}

export interface Model {
  provider: string
  model: string
  display_name?: string
}

export interface ModelRef {
  provider: string
  model: string
}

export interface PlatformSession {
  platform_id: string
  workspace: string
  slug: string
  title?: string
  mail_driven: boolean
  updated_at?: string
}

export interface AgentDetail extends Agent {
  models: Model[] | null
  allowed_models: ModelRef[] | null
  models_unrestricted: boolean
  sessions: Session[] | null
  platform_sessions: PlatformSession[] | null
}

export interface UpdateAgentRequest {
  default_rounds?: number
}

export interface AllowedModels {
  allowed_models: ModelRef[] | null
  models_unrestricted: boolean
}

export type MailType =
  | 'normal'
  | 'permission_request'
  | 'permission_decision'
  | 'failure_report'
  | 'reminder'

export interface SendMailRequest {
  to: string
  cc?: string
  subject: string
  body: string
  reply_to?: string
  session_alias?: string
  attachment_ids?: string[]
  round_budget?: number
}

export interface SendMailResponse {
  status: string
  mail_id: string
  session_id: string
  session_alias: string
  new_session: boolean
  budget_remaining: number
  budget_max: number
}

export interface ForwardRequest {
  to: string
  cc?: string
  subject?: string
  body?: string
}

export interface Recipient {
  name: string
  kind: 'agent' | 'person'
  role: 'to' | 'cc'
  address: string
  workspace?: string
}

export interface Attachment {
  attachment_id: string
  filename: string
  size: number
  sha256: string
  content_type: string
  created_at: string
}

export interface Mail {
  mail_id: string
  session_id: string
  session_alias: string
  parent_mail_id?: string
  from_name: string
  from_kind: 'agent' | 'person' | 'system'
  from_address: string
  recipients: Recipient[] | null
  subject: string
  body: string
  mail_type: MailType
  relay?: string
  attachments: Attachment[] | null
  created_at: string
  read: boolean
  role?: 'to' | 'cc'
  permission?: Permission
}

export interface MailList {
  mails: Mail[] | null
  unread: number
  next_cursor?: string
}

export interface MarkReadRequest {
  mail_ids: string[]
  unread?: boolean
}

export interface TreeNode {
  mail_id: string
  parent_mail_id?: string
  session_id: string
  session_alias: string
  from_name: string
  subject: string
  snippet: string
  mail_type: MailType
  depth: number
  created_at: string
}

export interface Tree {
  root_id: string
  focus_id: string
  nodes: TreeNode[] | null
  has_before: boolean
  has_after: boolean
  before_cursor?: string
  after_cursor?: string
  total: number
}

export type RunState = 'running' | 'idle' | 'finished' | 'failed'

export interface Session {
  session_id: string
  alias: string
  alias_source: 'auto' | 'platform' | 'manual'
  subject: string
  agent_name?: string
  workspace: string
  budget_max: number
  used_rounds: number
  platform_session_id?: string
  participants: string[] | null
  created_by: string
  created_at: string
  last_activity: string
  unread: number
  last_mail_id?: string
  last_from?: string
  last_snippet?: string
  mail_count: number
  pending_permissions: number
  run_state?: RunState
}

export interface SessionList {
  sessions: Session[] | null
}

export interface UpdateSessionRequest {
  alias?: string
  budget_max?: number
  reset_used?: boolean
}

export interface Permission {
  mail_id: string
  session_id: string
  agent_name: string
  question: string
  options: string[] | null
  context?: string
  tool?: string
  args_hash?: string
  relay_key: string
  status: 'pending' | 'approved' | 'denied'
  decision?: string
  approved: boolean
  always: boolean
  note?: string
  decided_by?: string
  decided_via?: 'api' | 'reply' | 'timeout'
  decision_mail_id?: string
  decided_at?: string
  expires_at?: string
  created_at: string
}

export interface PermissionList {
  permissions: Permission[] | null
}

export interface DecideRequest {
  decision: string
  note?: string
}

export interface Grant {
  grant_id: string
  agent_name: string
  tool: string
  scope: string
  granted_by: string
  mail_id?: string
  created_at: string
}

export interface GrantList {
  grants: Grant[] | null
}

export type SuggestionKind = 'person' | 'agent' | 'workspace' | 'session'

export interface Suggestion {
  address: string
  kind: SuggestionKind
  name: string
  workspace?: string
  alias?: string
  title?: string
  last_active?: string
}

export interface SuggestionList {
  suggestions: Suggestion[] | null
}

export interface Resolution {
  address: string
  name: string
  kind: 'agent' | 'person'
  workspace: string
  session: 'default' | 'new' | 'alias'
  exists: boolean
  session_id?: string
  alias?: string
}

export interface Counts {
  unread: number
  pending_permissions: number
}

export interface Run {
  run_id: string
  session_id: string
  mail_id: string
  agent_name: string
  state: RunState
  model?: string
  attempt: number
  pid?: number
  exit_code?: number
  started_at: string
  ended_at?: string
  duration_ms: number
  bytes_read: number
  unparsed_lines: number
  stop_reason?: string
  error?: string
  updated_at: string
}

export interface RunList {
  runs: Run[] | null
}

/** SSE event names of /api/v1/me/events/stream. */
export type EventName =
  | 'new_mail'
  | 'permission_request'
  | 'permission_decision'
  | 'session_updated'
  | 'run_updated'

export interface NewMailEvent {
  mail_id: string
  session_id: string
  from_name: string
  from_kind: string
  subject: string
  mail_type: MailType
  role: string
  session_alias: string
  parent_mail_id?: string
  created_at: string
}

export interface PermissionDecisionEvent {
  mail_id: string
  decision_mail_id: string
  decision: string
  approved: boolean
  always: boolean
  note: string
  decided_by: string
  session_id: string
}
