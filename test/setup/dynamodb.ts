/** Placeholder until the dynamodb setup lands. */
export default async function setup(): Promise<void> {}
