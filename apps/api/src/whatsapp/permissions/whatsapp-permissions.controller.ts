import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { WhatsAppPermission } from '@metatronos/shared-types';
import {
  CreateWhatsAppPermissionDto,
  SuccessDto,
  UpdateWhatsAppPermissionDto,
  WhatsAppPermissionDto,
} from './dto/whatsapp-permission.dto';
import { WhatsAppPermissionsService } from './whatsapp-permissions.service';

@ApiTags('whatsapp')
@Controller('whatsapp/permissions')
export class WhatsAppPermissionsController {
  constructor(private readonly permissions: WhatsAppPermissionsService) {}

  @Get()
  @ApiOperation({ summary: 'Every contact permission, sorted by displayName' })
  @ApiOkResponse({ type: [WhatsAppPermissionDto] })
  list(): Promise<WhatsAppPermission[]> {
    return this.permissions.list();
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add a contact (canRead, canReply and trusted default to false)',
  })
  @ApiOkResponse({ type: WhatsAppPermissionDto })
  @ApiBadRequestResponse({
    description:
      '"phoneNumber and displayName are required", "Invalid phone number", or invalid fields',
  })
  @ApiConflictResponse({
    description: '"Permission already exists for this phone number"',
  })
  create(
    @Body() body: CreateWhatsAppPermissionDto,
  ): Promise<WhatsAppPermission> {
    return this.permissions.create(body, 'owner');
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Change displayName, canRead, canReply or trusted; omitted fields are kept',
  })
  @ApiOkResponse({ type: WhatsAppPermissionDto })
  @ApiBadRequestResponse({ description: 'Invalid fields (nothing is changed)' })
  @ApiNotFoundResponse({ description: '"Permission not found"' })
  update(
    @Param('id') id: string,
    @Body() body: UpdateWhatsAppPermissionDto,
  ): Promise<WhatsAppPermission> {
    return this.permissions.update(id, body, 'owner');
  }

  @Post(':id/resume-auto-reply')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Lift the bot-loop guard's pause: auto-replies to the contact start again with its next message",
  })
  @ApiOkResponse({ type: WhatsAppPermissionDto })
  @ApiNotFoundResponse({ description: '"Permission not found"' })
  resumeAutoReply(@Param('id') id: string): Promise<WhatsAppPermission> {
    return this.permissions.resumeAutoReply(id);
  }

  @Delete(':id')
  @ApiOperation({
    summary:
      'Delete a permission: the AI can no longer read from or reply to the contact',
  })
  @ApiOkResponse({ type: SuccessDto })
  @ApiNotFoundResponse({ description: '"Permission not found"' })
  async remove(@Param('id') id: string): Promise<{ success: true }> {
    await this.permissions.remove(id, 'owner');
    return { success: true };
  }
}
