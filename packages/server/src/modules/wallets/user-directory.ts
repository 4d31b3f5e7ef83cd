/**
 * How the wallets module asks whether a user exists (docs/api.md section 4: `user_id` must be a
 * user of the project, 404 otherwise). The users module owns users and implements this; wallets
 * never read its tables.
 */
export interface UserDirectory {
  /** True when `userId` is a user of the project. */
  userExists(projectId: string, userId: string): Promise<boolean>;
}
