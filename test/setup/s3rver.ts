/** Placeholder until the s3rver setup lands. */
export default async function setup(): Promise<void> {}
