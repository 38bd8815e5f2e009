export type { Incident, Workspace } from '../shared/types.js';
export { INCIDENT_STATES, type IncidentState, type RunStatus, type StateFile } from '../incident/types.js';
