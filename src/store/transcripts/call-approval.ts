/** A tool call's approval columns, as its row reads them. */
export interface ApprovalColumns {
  approval: string | null;
  approval_by: string | null;
  approval_at: Date | null;
  approval_note?: string | null;
}

/**
 * A call's approval as a hit or a record shows it: where it stands, who decided, when, and the
 * note where the row reads one; none for a call that needed none.
 */
export const approvalOf = (r: ApprovalColumns) =>
  r.approval
    ? {
        approval: {
          status: r.approval,
          ...(r.approval_by ? { by: r.approval_by } : {}),
          ...(r.approval_at ? { at: r.approval_at } : {}),
          ...(r.approval_note ? { note: r.approval_note } : {}),
        },
      }
    : {};
