import { call } from './api.js';

/** The signed-in account as GET /portal/api/session answers it. */
export interface Session {
  project: string;
  account: { id: string; email: string; role: string; passwordChangeRequired: boolean };
  expiresAt: string;
  permissions: string[];
}

export async function currentSession(): Promise<Session | null> {
  try {
    return (await call<Session>('GET', '/portal/api/session')).body;
  } catch {
    return null;
  }
}

export async function signIn(project: string, email: string, password: string): Promise<Session> {
  return (await call<Session>('POST', '/portal/api/session', { body: { project, email, password } })).body;
}

export async function signOut(): Promise<void> {
  await call('DELETE', '/portal/api/session');
}

export async function choosePassword(currentPassword: string, newPassword: string): Promise<Session> {
  return (await call<Session>('PUT', '/portal/api/session/password', { body: { currentPassword, newPassword } })).body;
}
