/**
 * The BullMQ job id for a delivery id. BullMQ refuses custom ids that are integers or hold `:`, so
 * such an id (and any starting with `~`, to keep the mapping one-to-one) becomes `~` + its base64url.
 * Svix ids (`msg_...`) pass through unchanged, so they stay readable in dashboards.
 */
export function jobIdFor(id: string): string {
  const plain = !id.startsWith('~') && !id.includes(':') && `${Number.parseInt(id, 10)}` !== id;
  return plain ? id : `~${Buffer.from(id, 'utf8').toString('base64url')}`;
}
