import { controlPlaneUserId } from '../../support/console-fixtures';
import { auditRows, emailOf, startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';
import { CONSOLE_SCOPES, signIn } from '../../support/management-flow';

const T = '/management/tenants/acme';

/** Contract 15: every member reads the member list; owners add, re-role and remove members. */
describe('management API: members (contract 15)', () => {
  let w: ConsoleTenant;
  beforeAll(async () => {
    w = await startConsoleTenant();
  });
  afterAll(async () => {
    await w.close();
  });

  const memberRows = async (): Promise<unknown[]> =>
    (await w.t.pg.query(`SELECT user_id, role FROM memberships WHERE tenant_id = 'acme' ORDER BY user_id`)).rows;

  it('lists the members with their address and role', async () => {
    const res = await w.as('viewer').get(`${T}/members`).expect(200);
    expect(res.body.members).toHaveLength(5);
    expect(res.body.members).toEqual(
      expect.arrayContaining([
        { user_id: w.userIds.owner, email: emailOf('owner'), role: 'owner' },
        { user_id: w.userIds.viewer, email: emailOf('viewer'), role: 'viewer' },
      ]),
    );
  });

  it('adds a member by canonical address, who then reads the tenant; the row names the actor and the role', async () => {
    const res = await w
      .as('owner')
      .post(`${T}/members`, { email: ' New.Dev@Studio.example ', role: 'developer' })
      .expect(201);
    const userId = await controlPlaneUserId(w.t, 'new.dev@studio.example');
    expect(res.body).toEqual({ member: { user_id: userId, email: 'new.dev@studio.example', role: 'developer' } });
    expect((await auditRows(w.t, 'acme', 'console.member.add')).at(-1)).toEqual({
      subject: userId,
      data: { actor_id: w.userIds.owner, role: 'developer' },
    });
    const tokens = await signIn(w.t, 'new.dev@studio.example', CONSOLE_SCOPES);
    await w.t.auth().get(T).set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
  });

  it('changes a member’s role with the same call', async () => {
    await w
      .as('owner')
      .post(`${T}/members`, { email: emailOf('viewer'), role: 'admin' })
      .expect(201);
    expect((await w.as('viewer').get(`${T}/users`).query({ q: 'nobody@example.com' })).status).toBe(200);
    await w
      .as('owner')
      .post(`${T}/members`, { email: emailOf('viewer'), role: 'viewer' })
      .expect(201);
    expect((await w.as('viewer').get(`${T}/users`).query({ q: 'nobody@example.com' })).status).toBe(403);
  });

  it.each([
    ['an unknown role', { email: 'x@studio.example', role: 'superuser' }],
    ['not an address', { email: 'not an address', role: 'viewer' }],
    // The sign-in form refuses it, so such a member could never sign in.
    ['an address the sign-in form refuses', { email: 'dev@localhost', role: 'viewer' }],
    ['an unknown field', { email: 'x@studio.example', role: 'viewer', tenant: 'other-team' }],
    ['a missing role', { email: 'x@studio.example' }],
  ])('refuses %s with 400 and changes nothing', async (_label, body) => {
    const before = await memberRows();
    expect((await w.as('owner').post(`${T}/members`, body).expect(400)).body.error).toBe('invalid_request');
    expect(await memberRows()).toEqual(before);
  });

  it('removes a member, whose very next request with the same token is refused', async () => {
    const leaving = await signIn(w.t, emailOf('developer'), CONSOLE_SCOPES);
    const res = await w.as('owner').delete(`${T}/members/${w.userIds.developer}`).expect(200);
    expect(res.body).toEqual({ removed: true });
    await w.t.auth().get(T).set('Authorization', `Bearer ${leaving.access_token}`).expect(403);
    expect((await auditRows(w.t, 'acme', 'console.member.remove')).at(-1)).toEqual({
      subject: w.userIds.developer,
      data: { actor_id: w.userIds.owner },
    });
    await w.as('owner').delete(`${T}/members/${w.userIds.developer}`).expect(404);
    await w.as('owner').delete(`${T}/members/${w.userIds.outsider}`).expect(404);
  });

  it('keeps an owner: the last owner can neither leave nor step down, and nothing changes', async () => {
    const before = await memberRows();
    const leave = await w.as('owner').delete(`${T}/members/${w.userIds.owner}`).expect(400);
    expect(leave.body.error_description).toMatch(/owner/);
    await w
      .as('owner')
      .post(`${T}/members`, { email: emailOf('owner'), role: 'admin' })
      .expect(400);
    expect(await memberRows()).toEqual(before);
    // With a second owner, the first may step down.
    await w
      .as('owner')
      .post(`${T}/members`, { email: emailOf('admin'), role: 'owner' })
      .expect(201);
    await w
      .as('owner')
      .post(`${T}/members`, { email: emailOf('owner'), role: 'admin' })
      .expect(201);
  });

  it('counts only active owners: beside a deactivated one, the last active owner cannot step down', async () => {
    const { owner, viewer } = w.userIds;
    // Two owners, one of them deactivated; every other member a non-owner.
    await w.t.pg.query(
      `UPDATE memberships SET role = CASE WHEN user_id IN ($1, $2) THEN 'owner' ELSE 'admin' END WHERE tenant_id = 'acme'`,
      [owner, viewer],
    );
    await w.t.pg.query(`UPDATE users SET status = 'deactivated', deactivated_at = now() WHERE id = $1`, [viewer]);
    const before = await memberRows();
    const stepDown = await w
      .as('owner')
      .post(`${T}/members`, { email: emailOf('owner'), role: 'admin' })
      .expect(400);
    expect(stepDown.body.error_description).toMatch(/owner/);
    await w.as('owner').delete(`${T}/members/${owner}`).expect(400);
    expect(await memberRows()).toEqual(before);
    // The deactivated owner may go: an active one stays.
    await w.as('owner').delete(`${T}/members/${viewer}`).expect(200);
  });
});
