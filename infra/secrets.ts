/** The HS256 secret that signs API tokens (`npx sst secret set JwtSecret …`). */
export const jwtSecret = new sst.Secret("JwtSecret");
