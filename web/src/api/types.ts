// Wire types of the AgentMail HTTP API under the names the page uses. They
// are aliases of openapi.gen.ts, which is generated from api/openapi.json
// (itself generated from the route table and client/types*.go, where units
// and rules are documented): change the Go types, run
// `go generate ./internal/httpapi` and `npm --prefix web run gen:types`,
// never this file's shapes. docs/API.md names the route of each type.

import type { components } from './openapi.gen'

type Schemas = components['schemas']

/** ErrorBody is the JSON shape of every error answer (W-9). */
export type ErrorBody = Schemas['ErrorBody']

export type Role = Schemas['User']['role']
export type LoginResponse = Schemas['LoginResponse']
export type ChangePasswordRequest = Schemas['ChangePasswordRequest']
export type Me = Schemas['Me']
export type EmailNotify = Schemas['Me']['email_notify']
export type EmailDelivery = Schemas['EmailDelivery']
export type UpdateMeRequest = Schemas['UpdateMeRequest']
export type VerifyEmailRequest = Schemas['VerifyEmailRequest']

export type Lifecycle = Schemas['KeyInfo']['lifecycle']
export type CreateUserKeyRequest = Schemas['CreateUserKeyRequest']
export type CreateAgentKeyRequest = Schemas['CreateAgentKeyRequest']
export type KeyInfo = Schemas['KeyInfo']
export type CreatedKey = Schemas['CreatedKey']
export type KeyList = Schemas['KeyList']

export type User = Schemas['User']
export type CreateUserRequest = Schemas['CreateUserRequest']
export type UpdateUserRequest = Schemas['UpdateUserRequest']
export type UserList = Schemas['UserList']

export type Agent = Schemas['Agent']
export type AgentList = Schemas['AgentList']
export type Model = Schemas['Model']
export type ModelRef = Schemas['ModelRef']
export type PlatformSession = Schemas['PlatformSession']
export type AgentDetail = Schemas['AgentDetail']
export type UpdateAgentRequest = Schemas['UpdateAgentRequest']
export type AllowedModels = Schemas['AllowedModels']
export type SetAllowedModelsRequest = Schemas['SetAllowedModelsRequest']

export type MailType = Schemas['Mail']['mail_type']
export type SendMailRequest = Schemas['SendMailRequest']
export type SendMailResponse = Schemas['SendMailResponse']
export type ForwardRequest = Schemas['ForwardRequest']
export type Recipient = Schemas['Recipient']
export type Attachment = Schemas['Attachment']
export type Mail = Schemas['Mail']
export type MailList = Schemas['MailList']
export type SearchResults = Schemas['SearchResults']
export type SearchHit = Schemas['SearchHit']
export type TextSpan = Schemas['TextSpan']
export type MarkReadRequest = Schemas['MarkReadRequest']
export type MarkReadResponse = Schemas['MarkReadResponse']
export type TreeNode = Schemas['TreeNode']
export type Tree = Schemas['Tree']

export type RunState = Schemas['Run']['state']
export type Session = Schemas['Session']
export type SessionRef = Schemas['SessionRef']
export type SessionList = Schemas['SessionList']
export type UpdateSessionRequest = Schemas['UpdateSessionRequest']

export type Permission = Schemas['Permission']
export type PermissionList = Schemas['PermissionList']
export type DecideRequest = Schemas['DecideRequest']
export type Grant = Schemas['Grant']
export type GrantList = Schemas['GrantList']

export type SuggestionKind = Schemas['Suggestion']['kind']
export type Suggestion = Schemas['Suggestion']
export type SuggestionList = Schemas['SuggestionList']
export type Resolution = Schemas['Resolution']
export type Counts = Schemas['Counts']

export type Run = Schemas['Run']
export type RunList = Schemas['RunList']

export type Importance = Schemas['Mail']['importance']
export type MailAck = Schemas['MailAck']
export type AckResponse = Schemas['AckResponse']
export type AckWaiting = Schemas['AckWaiting']
export type AckWaitingList = Schemas['AckWaitingList']
export type Reservation = Schemas['Reservation']
export type ReservationList = Schemas['ReservationList']
export type ReservationEvent = Schemas['ReservationEvent']

export type NewMailEvent = Schemas['NewMailEvent']
export type RunStopResponse = Schemas['RunStopResponse']
export type PermissionDecisionEvent = Schemas['PermissionDecisionEvent']

/**
 * EVENT_SCHEMAS names the SSE events of /api/v1/me/events/stream and the
 * schema of each one's data, as api/openapi.json lists them under
 * "x-agentmail-events" (types.test.ts fails when the two differ).
 */
export const EVENT_SCHEMAS = {
  new_mail: 'NewMailEvent',
  permission_request: 'Permission',
  permission_decision: 'PermissionDecisionEvent',
  session_updated: 'Session',
  run_updated: 'Run',
  reservation_changed: 'ReservationEvent', // agents' streams only
  run_stop: 'RunStopEvent', // agents' streams only
} as const satisfies Record<string, keyof Schemas>

/** EventName is the name of one SSE event. */
export type EventName = keyof typeof EVENT_SCHEMAS

/** EventData is the JSON data of the event named N. */
export type EventData<N extends EventName> = Schemas[(typeof EVENT_SCHEMAS)[N]]
